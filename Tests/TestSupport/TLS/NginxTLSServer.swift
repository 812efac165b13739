import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real nginx serving a temporary directory over TLS (`listen ... ssl`) on a free loopback
/// port, as a child process: the TLS twin of ``NginxServer``.
///
/// ```swift
/// let authority = try TestCertificateAuthority()
/// let nginx = try await NginxTLSServer.start(certificate: authority.server)
/// try nginx.publish("hello", as: "hello.txt")
/// // GET https://127.0.0.1:<nginx.port>/hello.txt, trusting authority.certificatePEM → 200
/// await nginx.stop()
/// ```
///
/// With `clientCertificateAuthority`, nginx asks every client for a certificate signed by it
/// (`ssl_verify_client on`); a client without one gets HTTP 400 ("No required SSL certificate
/// was sent"), since nginx checks after the handshake. It speaks TLS 1.2 and 1.3 and keeps
/// connections alive for 1000 requests. Every answer carries `X-Connection` (nginx's
/// connection serial number: equal numbers mean one kept-alive connection) and, when a
/// request carried one, `X-Received-Proxy-Authorization`; `.sse` files are served as
/// `text/event-stream`, `.json` as `application/json`. Skip when ``NginxServer/executable`` is `nil`.
public final class NginxTLSServer: Sendable {
  /// The directory nginx runs in; documents are under `html/`.
  public let prefix: TemporaryDirectory
  /// The loopback port nginx listens on.
  public let port: UInt16
  private let process: Process

  /// Starts nginx with `certificate` (and its key) on `127.0.0.1`; with `sessionTickets`,
  /// nginx hands out TLS session tickets (TLS 1.3 sends them after the handshake).
  ///
  /// - Throws: when nginx is not installed or does not start listening within 10 s.
  public static func start(
    certificate: TestCertificateAuthority.Identity,
    clientCertificateAuthority: TestCertificateAuthority.Identity? = nil,
    sessionTickets: Bool = false
  ) async throws -> NginxTLSServer {
    guard let executable = NginxServer.executable else {
      throw ChildProcessError.executableNotFound(name: "nginx", searched: ["PATH", "/usr/sbin"])
    }
    // Borrow a free loopback port from a server that we stop at once.
    let probe = try await TestHTTPServer.start()
    let port = probe.port
    probe.stop()
    let server = try NginxTLSServer(
      executable: executable, port: port, certificate: certificate,
      clientCertificateAuthority: clientCertificateAuthority, sessionTickets: sessionTickets)
    try await waitUntil("nginx to listen", timeout: .seconds(10)) {
      (try? LoopbackClient(port: port)) != nil
    }
    return server
  }

  private init(
    executable: String, port: UInt16, certificate: TestCertificateAuthority.Identity,
    clientCertificateAuthority: TestCertificateAuthority.Identity?, sessionTickets: Bool
  ) throws {
    self.port = port
    prefix = try TemporaryDirectory(prefix: "tether-nginx-tls")
    for name in ["html", "tmp"] {
      try FileManager.default.createDirectory(
        at: prefix.file(name), withIntermediateDirectories: true)
    }
    // nginx's workers may run as another user (nobody) when the tests run as root.
    for path in [prefix.url.path, prefix.file("html").path, prefix.file("tmp").path] {
      try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path)
    }
    let root = prefix.url.path
    let clientVerification =
      clientCertificateAuthority.map {
        "ssl_client_certificate \($0.certificateFile.path); ssl_verify_client on;"
      } ?? ""
    try Data(
      """
      worker_processes 1;
      error_log \(root)/error.log;
      pid \(root)/nginx.pid;
      events { worker_connections 64; }
      http {
        access_log off;
        client_body_temp_path \(root)/tmp;
        proxy_temp_path \(root)/tmp;
        fastcgi_temp_path \(root)/tmp;
        uwsgi_temp_path \(root)/tmp;
        scgi_temp_path \(root)/tmp;
        keepalive_requests 1000;
        server {
          listen 127.0.0.1:\(port) ssl;
          ssl_certificate \(certificate.certificateFile.path);
          ssl_certificate_key \(certificate.keyFile.path);
          ssl_protocols TLSv1.2 TLSv1.3;
          ssl_session_tickets \(sessionTickets ? "on" : "off");
          \(clientVerification)
          root \(root)/html;
          default_type text/plain;
          types { text/event-stream sse; application/json json; text/plain txt; }
          # Which connection served the request (keep-alive reuse shows as one number), and
          # any Proxy-Authorization that reached the origin (it must never).
          add_header X-Connection $connection always;
          add_header X-Received-Proxy-Authorization $http_proxy_authorization always;
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

  /// `https://127.0.0.1:<port>`.
  public var baseURL: URL { URL(string: "https://127.0.0.1:\(port)")! }

  /// Writes `text` as `html/<name>` atomically, readable by nginx's workers.
  public func publish(_ text: String, as name: String) throws {
    let url = prefix.file("html/\(name)")
    try Data(text.utf8).write(to: url, options: .atomic)
    try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: url.path)
  }

  /// nginx's error log, to explain a failed test.
  public var errorLog: String {
    (try? String(contentsOf: prefix.file("error.log"), encoding: .utf8)) ?? ""
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
