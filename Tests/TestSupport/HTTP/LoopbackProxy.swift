import Foundation

/// A real HTTP proxy on 127.0.0.1 for tests, reaching servers on loopback only: it answers
/// `CONNECT 127.0.0.1:<port>` by opening a tunnel (for `https`), and forwards an absolute-form
/// request (`GET http://127.0.0.1:<port>/path HTTP/1.1`, for `http`) in origin form without
/// the proxy's own headers (`Proxy-Authorization`, `Proxy-Connection`), one request per
/// client connection (it asks the origin to close after its answer).
///
/// ```swift
/// let proxy = try LoopbackProxy(credentials: ("user", "secret"))
/// let client = HTTPClient(baseURL: nginx.baseURL, proxy: .all(proxy.url(user: "user", password: "secret")))
/// // … requests …
/// #expect(proxy.requests.map(\.method) == ["CONNECT"])
/// ```
///
/// With `credentials`, a request without the matching `Proxy-Authorization: Basic …` gets
/// `407 Proxy Authentication Required`. Every request the proxy reads is recorded with its
/// headers, so a test can see what reached the proxy (and, through the origin's own record,
/// what did not go further).
public final class LoopbackProxy: Sendable {
  private let server: HostileServer

  /// Starts the proxy on an ephemeral port; `credentials` (user, password), if given, are
  /// required from every client.
  public init(credentials: (user: String, password: String)? = nil) throws {
    let expected = credentials.map {
      "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString()
    }
    server = try HostileServer { connection in
      guard let request = try connection.readRequestHead() else { return }
      if let expected, request.header("Proxy-Authorization") != expected {
        try connection.send(
          "HTTP/1.1 407 Proxy Authentication Required\r\n"
            + "Proxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n"
            + "Connection: close\r\n\r\n")
        return
      }
      if request.method == "CONNECT" {
        guard let port = Self.loopbackPort(authority: request.target) else {
          try connection.send("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
          return
        }
        try connection.send("HTTP/1.1 200 Connection established\r\n\r\n")
        try connection.relay(toLoopbackPort: port, first: Data())
        return
      }
      guard let url = URL(string: request.target), url.scheme == "http", let host = url.host,
        let port = Self.loopbackPort(authority: "\(host):\(url.port ?? 80)")
      else {
        try connection.send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        return
      }
      var target = url.path.isEmpty ? "/" : url.path
      if let query = url.query { target += "?" + query }
      var head = "\(request.method) \(target) HTTP/1.1\r\n"
      for (name, value) in request.headerFields {
        switch name.lowercased() {
        case "proxy-authorization", "proxy-connection", "connection": continue
        default: head += "\(name): \(value)\r\n"
        }
      }
      head += "Connection: close\r\n\r\n"
      try connection.relay(toLoopbackPort: port, first: Data(head.utf8))
    }
  }

  /// Closes the proxy and every connection through it.
  public func stop() { server.stop() }

  /// The port the proxy listens on.
  public var port: UInt16 { server.port }

  /// `http://[user:password@]127.0.0.1:<port>`, the proxy's URL.
  public func url(user: String? = nil, password: String? = nil) -> URL {
    let userInfo = user.map { "\($0):\(password ?? "")@" } ?? ""
    return URL(string: "http://\(userInfo)127.0.0.1:\(server.port)")!
  }

  /// Every request the proxy read, in order (`CONNECT` requests and absolute-form ones).
  public var requests: [HostileRequest] { server.requests }

  /// How many client connections the proxy accepted.
  public var connectionCount: Int { server.connectionCount }

  /// The port of `127.0.0.1:<port>` or `localhost:<port>`; `nil` for any other host.
  private static func loopbackPort(authority: String) -> UInt16? {
    guard let colon = authority.lastIndex(of: ":"),
      let port = UInt16(authority[authority.index(after: colon)...])
    else { return nil }
    let host = authority[..<colon]
    return ["127.0.0.1", "localhost"].contains(host) ? port : nil
  }
}
