import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

/// nginx's binary, if installed (`Scripts/install-test-deps` installs it).
private let nginxPath: String? = {
  let candidates =
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx"]
    + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
      "\($0)/nginx"
    }
  return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}()

/// nginx serving a temporary prefix on an ephemeral loopback port, as a child process.
private final class Nginx {
  let prefix: TemporaryDirectory
  let process = Process()
  let port: UInt16

  var documentURL: URL { URL(string: "http://127.0.0.1:\(port)/config.json")! }

  init(executable: String) async throws {
    prefix = try TemporaryDirectory()
    // Borrow a free loopback port from a server that we stop at once.
    let probe = try await TestHTTPServer.start()
    port = probe.port
    probe.stop()
    try FileManager.default.createDirectory(
      at: prefix.file("html"), withIntermediateDirectories: true)
    let root = prefix.url.path
    try prefix.write(
      """
      worker_processes 1;
      error_log \(root)/error.log;
      pid \(root)/nginx.pid;
      events { worker_connections 64; }
      http {
        log_format conditional escape=none '$status $http_if_none_match';
        access_log \(root)/access.log conditional;
        client_body_temp_path \(root)/tmp;
        proxy_temp_path \(root)/tmp;
        fastcgi_temp_path \(root)/tmp;
        uwsgi_temp_path \(root)/tmp;
        scgi_temp_path \(root)/tmp;
        server {
          listen 127.0.0.1:\(port);
          root \(root)/html;
          default_type application/json;
        }
      }
      """, to: "nginx.conf")
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["-p", root, "-c", prefix.file("nginx.conf").path, "-g", "daemon off;"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  func publish(_ text: String) throws {
    let url = prefix.file("html/config.json")
    try Data(text.utf8).write(to: url, options: .atomic)
    // nginx's workers may run as another user (nobody) when the tests run as root.
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
  }

  var accessLog: [String] {
    let text = (try? String(contentsOf: prefix.file("access.log"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
  }

  /// Stops nginx (SIGTERM, then SIGKILL if it has not exited within two seconds).
  func stop() async {
    guard process.isRunning else { return }
    process.terminate()
    do {
      try await waitUntil("nginx to exit", timeout: .seconds(2)) { !process.isRunning }
    } catch {
      kill(process.processIdentifier, SIGKILL)
    }
  }

  deinit {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
  }
}

@Suite struct NginxIntegrationTests {
  @Test(
    .enabled(
      if: nginxPath != nil,
      "nginx is not installed; run Scripts/install-test-deps to include this integration test"))
  func etag304AndUpdatesAgainstARealNginx() async throws {
    let nginx = try await Nginx(executable: try #require(nginxPath))
    try nginx.publish(document(["welcome_title": #""From nginx""#, "max_items": "1"]))
    let config = RemoteConfig(
      source: HTTPConfigSource(url: nginx.documentURL),
      settings: RemoteConfigSettings(fetchTimeout: 2))
    try await waitUntil("nginx to serve the document", timeout: .seconds(10)) {
      config.isStale = true
      return (try? await config.fetchAndActivate()) != nil
    }
    #expect(config[.welcomeTitle] == "From nginx")

    // The ETag path: nginx answers the conditional request with 304.
    let updates = Recorder(config.updates)
    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    // nginx logs a request just after answering it.
    try await waitUntil("two access log lines") { nginx.accessLog.count >= 2 }
    let log = nginx.accessLog
    #expect(log.first?.trimmingCharacters(in: .whitespaces) == "200", "access log: \(log)")
    let conditional = try #require(log.last)
    #expect(conditional.hasPrefix("304 \""), "access log: \(log)")
    #expect(updates.values.isEmpty)

    // The update path: a new document reaches a polling config.
    let values = Recorder(config.values(for: .welcomeTitle))
    config.startPolling(every: .milliseconds(100))
    try nginx.publish(document(["welcome_title": #""Updated by nginx""#, "max_items": "12"]))
    try await values.waitForValues(2, timeout: .seconds(10))
    #expect(values.values == ["From nginx", "Updated by nginx"])
    #expect(config[.maxItems] == 12)
    #expect(
      try await updates.waitForValues(1)
        == [ConfigUpdate(updatedKeys: ["welcome_title", "max_items"])])
    config.stopPolling()
    await nginx.stop()
  }
}
