import Foundation

/// Writes an ``HTTPRequest`` as HTTP/1.1 bytes (RFC 9112): the request line in origin form
/// (absolute form for a proxy), `Host`, the caller's headers, the framing headers, then the
/// body.
///
/// It takes a request the executor has validated (``RequestValidation``): the method is a
/// token and no header name or value can end a line. The framing is always its own:
/// `Host`, `Content-Length`, `Transfer-Encoding` and `Connection` from the caller are dropped,
/// so a request can never announce a body other than the one it carries.
enum HTTP1RequestSerializer {
  /// The request's bytes. `host` and `port` are the URL's (the port is omitted from `Host`
  /// when it is the scheme's default). With `absoluteForm` (a request to a proxy) the target is
  /// the whole URL and `proxyAuthorization`, if any, replaces a caller's `Proxy-Authorization`.
  static func serialize(
    _ request: HTTPRequest, absoluteForm: Bool = false, proxyAuthorization: String? = nil
  ) -> [UInt8] {
    let url = request.url
    let method = request.method.rawValue
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256 + (request.body?.count ?? 0))
    bytes.append(contentsOf: method.utf8)
    bytes.append(0x20)
    if absoluteForm {
      bytes.append(contentsOf: "\(url.scheme?.lowercased() ?? "http")://".utf8)
      bytes.append(contentsOf: hostHeader(of: url).utf8)
    }
    bytes.append(contentsOf: target(of: url).utf8)
    bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
    bytes.append(contentsOf: hostHeader(of: url).utf8)
    bytes.append(contentsOf: "\r\n".utf8)
    var hasUserAgent = false
    var hasAcceptEncoding = false
    var fields: [(name: String, value: String)] = []
    fields.reserveCapacity(request.headers.count + 3)
    for (name, value) in request.headers {
      switch name.lowercased() {
      case "host", "content-length", "transfer-encoding", "connection": continue
      case "proxy-authorization" where proxyAuthorization != nil: continue
      case "user-agent": hasUserAgent = true
      case "accept-encoding": hasAcceptEncoding = true
      default: break
      }
      fields.append((name, value))
    }
    if !hasUserAgent { fields.append(("User-Agent", "Tether")) }
    if let proxyAuthorization { fields.append(("Proxy-Authorization", proxyAuthorization)) }
    // Nothing is decompressed here: say so (without the header, any coding would be fair).
    if !hasAcceptEncoding { fields.append(("Accept-Encoding", "identity")) }
    fields.sort { $0.name < $1.name }
    // A name repeated in another case (possible through the `headers` dictionary) is sent
    // once, as URLSession does: the first in sorted order.
    var seen = Set<String>()
    for (name, value) in fields where seen.insert(name.lowercased()).inserted {
      bytes.append(contentsOf: name.utf8)
      bytes.append(contentsOf: ": ".utf8)
      bytes.append(contentsOf: value.utf8)
      bytes.append(contentsOf: "\r\n".utf8)
    }
    let body = request.body ?? Data()
    if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
      bytes.append(contentsOf: "Content-Length: \(body.count)\r\n".utf8)
    }
    bytes.append(contentsOf: "\r\n".utf8)
    bytes.append(contentsOf: body)
    return bytes
  }

  /// The request target in origin form: the percent-encoded path (`/` when empty) and query.
  static func target(of url: URL) -> String {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      return url.path.isEmpty ? "/" : url.path
    }
    var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    if let query = components.percentEncodedQuery { target += "?" + query }
    return target
  }

  /// The `Host` header: the host (an IPv6 literal in brackets) and a port other than the
  /// scheme's default.
  static func hostHeader(of url: URL) -> String {
    var host = url.host ?? ""
    if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
    let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
    guard let port = url.port, port != defaultPort else { return host }
    return "\(host):\(port)"
  }
}

/// The checks every request passes once, before any transport sees it: the method is an
/// RFC 9110 token and every header name is a token whose value holds no CR, LF or NUL.
/// Either flaw would let a request smuggle a second one (or a header) past the server.
enum RequestValidation {
  static func validate(_ request: HTTPRequest) throws(HTTPError) {
    let method = request.method.rawValue
    guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else {
      throw .invalidRequest("the method \"\(printable(method))\" is not a token")
    }
    for (name, value) in request.headers {
      guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte),
        !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
      else {
        throw .invalidRequest(
          "the header \"\(printable(name))\" has a line break or an invalid name")
      }
    }
    guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https"
    else {
      throw .invalidRequest("\(HTTPError.redacted(request.url)) is not an http(s) URL")
    }
    guard let host = request.url.host, !host.isEmpty else {
      throw .invalidRequest("\(HTTPError.redacted(request.url)) has no host")
    }
  }

  /// RFC 9110 tchar.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
      return true
    default: return false
    }
  }

  /// `text` with control characters shown escaped, for an error message.
  private static func printable(_ text: String) -> String {
    String(
      text.unicodeScalars.prefix(64).map {
        $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0)
      }.joined())
  }
}
