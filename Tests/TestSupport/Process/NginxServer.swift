import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real nginx serving a temporary directory on a free loopback port, as a child process.
///
/// ```swift
/// let nginx = try await NginxServer.start(acceptingPuts: true)
/// try nginx.publish(#"{"a":1}"#, as: "config.json")
/// // GET nginx.url(for: "/config.json") → 200 with ETag; If-None-Match → 304
/// // PUT nginx.url(for: "/config.json") → 201/204 (WebDAV), the file is replaced
/// await nginx.stop()
/// ```
///
/// `NginxServer.executable` is `nil` when nginx is not installed
/// (`Scripts/install-test-deps` installs it); tests skip then.
public final class NginxServer: Sendable {
  /// The directory nginx runs in; documents are under `html/`.
  public let prefix: TemporaryDirectory
  /// The loopback port nginx listens on.
  public let port: UInt16
  private let process: Process

  /// nginx's binary, if installed.
  public static let executable: String? = {
    let candidates =
      ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx"]
      + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
        "\($0)/nginx"
      }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  /// Starts nginx. With `acceptingPuts`, `PUT` replaces files (the WebDAV module).
  ///
  /// - Throws: when nginx is not installed or cannot start.
  public static func start(acceptingPuts: Bool = false) async throws -> NginxServer {
    guard let executable else {
      throw ChildProcessError.executableNotFound(name: "nginx", searched: ["PATH", "/usr/sbin"])
    }
    // Borrow a free loopback port from a server that we stop at once.
    let probe = try await TestHTTPServer.start()
    let port = probe.port
    probe.stop()
    let server = try NginxServer(executable: executable, port: port, acceptingPuts: acceptingPuts)
    try await waitUntil("nginx to listen", timeout: .seconds(10)) {
      (try? LoopbackClient(port: port)) != nil
    }
    return server
  }

  private init(executable: String, port: UInt16, acceptingPuts: Bool) throws {
    self.port = port
    prefix = try TemporaryDirectory()
    try FileManager.default.createDirectory(
      at: prefix.file("html"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      at: prefix.file("tmp"), withIntermediateDirectories: true)
    // nginx's workers may run as another user (nobody) when the tests run as root.
    for path in [prefix.url.path, prefix.file("html").path, prefix.file("tmp").path] {
      try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path)
    }
    let root = prefix.url.path
    let dav = acceptingPuts ? "dav_methods PUT; create_full_put_path on; dav_access all:rw;" : ""
    try Data(
      """
      worker_processes 1;
      error_log \(root)/error.log;
      pid \(root)/nginx.pid;
      events { worker_connections 64; }
      http {
        log_format conditional escape=none '$status $request_method $http_if_none_match';
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
          \(dav)
        }
      }
      """.utf8
    ).write(to: prefix.file("nginx.conf"))
    process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["-p", root, "-c", prefix.file("nginx.conf").path, "-g", "daemon off;"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  /// `http://127.0.0.1:<port>`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// The URL of `path` on this server.
  public func url(for path: String) -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
  }

  /// Writes `text` as `html/<name>` atomically, readable by nginx's workers.
  public func publish(_ text: String, as name: String) throws {
    let url = prefix.file("html/\(name)")
    let directory = url.deletingLastPathComponent()
    if !FileManager.default.fileExists(atPath: directory.path) {
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      try FileManager.default.setAttributes(
        [.posixPermissions: 0o777], ofItemAtPath: directory.path)
    }
    try Data(text.utf8).write(to: url, options: .atomic)
    try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: url.path)
  }

  /// The text of `html/<name>`, if it exists.
  public func contents(of name: String) -> String? {
    try? String(contentsOf: prefix.file("html/\(name)"), encoding: .utf8)
  }

  /// The access log: one `<status> <method> <If-None-Match>` line per request.
  public var accessLog: [String] {
    let text = (try? String(contentsOf: prefix.file("access.log"), encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map(String.init)
  }

  /// Stops nginx (SIGTERM, then SIGKILL if it has not exited within two seconds).
  public func stop() async {
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
