import Foundation

/// How the engine reaches one origin: where the TCP connection goes (the origin or a proxy),
/// whether a `CONNECT` tunnel comes first, whether TLS runs over it, and how requests are
/// written (origin form, or absolute form with `Proxy-Authorization` for a proxy).
///
/// | URL     | proxy | TCP to | before HTTP                  | request target  |
/// |---------|-------|--------|------------------------------|-----------------|
/// | `http`  | no    | origin | nothing                      | origin form     |
/// | `https` | no    | origin | TLS with the origin          | origin form     |
/// | `http`  | yes   | proxy  | nothing                      | absolute form   |
/// | `https` | yes   | proxy  | `CONNECT`, then TLS (origin) | origin form     |
///
/// Proxy credentials go only where the proxy reads them: the `CONNECT` request of a tunnel
/// (the origin's TLS session never carries it), or the absolute-form request a proxy answers
/// for plain `http` (a proxy consumes `Proxy-Authorization`; RFC 9110 §11.7.1).
struct ConnectionRoute: Sendable {
  /// Where the TCP connection goes: the origin, or the proxy.
  var host: String
  var port: Int
  /// `scheme://host[:port]` of the origin: errors about the connection name it.
  var origin: String
  /// The `Host` header of requests to the origin: `host[:port]`, the port omitted when it is
  /// the scheme's default.
  var hostHeader: String
  /// Connections with the same key are interchangeable (one pool per key).
  var key: String
  /// TLS with the origin (for `https`), and the name its certificate must be for.
  var tls: TLSContext?
  var serverName: String
  /// The `CONNECT` request that opens a tunnel to the origin through the proxy, if any.
  var tunnelRequest: [UInt8]?
  /// Whether requests go to a proxy in absolute form (plain `http` through a proxy).
  var absoluteForm: Bool
  /// `Proxy-Authorization` for an absolute-form request (a tunnel's is in ``tunnelRequest``).
  var proxyAuthorization: String?

  /// The bytes of `request` on this route.
  func serialize(_ request: HTTPRequest) -> [UInt8] {
    HTTP1RequestSerializer.serialize(
      request, absoluteForm: absoluteForm, proxyAuthorization: proxyAuthorization,
      hostHeader: hostHeader)
  }

  /// The route to `url`'s origin, directly or through `proxy` (an `http://` proxy URL whose
  /// user information, if any, becomes `Proxy-Authorization`). `tls` is the context for an
  /// `https` URL.
  static func to(_ url: URL, proxy: URL?, tls: TLSContext?) -> ConnectionRoute {
    let scheme = url.scheme?.lowercased() ?? "http"
    let secure = scheme == "https"
    let host = url.host ?? ""
    let port = url.port ?? (secure ? 443 : 80)
    let hostHeader = HTTP1RequestSerializer.hostHeader(of: url)
    var route = ConnectionRoute(
      host: host, port: port, origin: "\(scheme)://\(hostHeader)", hostHeader: hostHeader,
      key: "\(scheme)://\(host):\(port)",
      tls: secure ? tls : nil, serverName: host, tunnelRequest: nil, absoluteForm: false,
      proxyAuthorization: nil)
    guard let proxy, let proxyHost = proxy.host else { return route }
    let proxyPort = proxy.port ?? 80
    route.host = proxyHost
    route.port = proxyPort
    route.key += " via \(proxyHost):\(proxyPort)"
    let authorization = Self.basicAuthorization(of: proxy)
    if secure {
      let authority = "\(bracketed(host)):\(port)"
      var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
      if let authorization { head += "Proxy-Authorization: \(authorization)\r\n" }
      head += "\r\n"
      route.tunnelRequest = Array(head.utf8)
    } else {
      route.absoluteForm = true
      route.proxyAuthorization = authorization
    }
    return route
  }

  /// `Basic` credentials from the proxy URL's user information (percent-decoded), if any.
  static func basicAuthorization(of proxy: URL) -> String? {
    guard let components = URLComponents(url: proxy, resolvingAgainstBaseURL: false),
      let user = components.user, !user.isEmpty
    else { return nil }
    let credentials = "\(user):\(components.password ?? "")"
    return "Basic " + Data(credentials.utf8).base64EncodedString()
  }

  private static func bracketed(_ host: String) -> String {
    host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
  }
}
