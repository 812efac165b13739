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
  ///
  /// `hostHeader` is the `Host` value when the caller already knows it (a ``ConnectionRoute``
  /// keeps it per origin); without it, it is worked out from the URL.
  static func serialize(
    _ request: HTTPRequest, absoluteForm: Bool = false, proxyAuthorization: String? = nil,
    hostHeader knownHost: String? = nil
  ) -> [UInt8] {
    let url = request.url
    let method = request.method.rawValue
    let host = knownHost ?? hostHeader(of: url)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(256 + (request.body?.count ?? 0))
    bytes.append(contentsOf: method.utf8)
    bytes.append(0x20)
    if absoluteForm {
      bytes.append(contentsOf: "\(url.scheme?.lowercased() ?? "http")://".utf8)
      bytes.append(contentsOf: host.utf8)
    }
    bytes.append(contentsOf: target(of: url).utf8)
    bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
    bytes.append(contentsOf: host.utf8)
    bytes.append(contentsOf: "\r\n".utf8)
    var hasUserAgent = false
    var hasAcceptEncoding = false
    var fields: [(name: String, lowercased: String, value: String)] = []
    fields.reserveCapacity(request.headers.count + 3)
    for (name, value) in request.headers {
      let lowercased = name.lowercased()
      switch lowercased {
      case "host", "content-length", "transfer-encoding", "connection": continue
      case "proxy-authorization" where proxyAuthorization != nil: continue
      case "user-agent": hasUserAgent = true
      case "accept-encoding": hasAcceptEncoding = true
      default: break
      }
      fields.append((name, lowercased, value))
    }
    if !hasUserAgent { fields.append(("User-Agent", "user-agent", userAgent)) }
    if let proxyAuthorization {
      fields.append(("Proxy-Authorization", "proxy-authorization", proxyAuthorization))
    }
    // Nothing is decompressed here: say so (without the header, any coding would be fair).
    if !hasAcceptEncoding { fields.append(("Accept-Encoding", "accept-encoding", acceptEncoding)) }
    fields.sort { $0.name < $1.name }
    // A name repeated in another case (possible through the `headers` dictionary) is sent
    // once, as URLSession does: the first in sorted order. Sorted by name, a repeat is not
    // always next to its first (`A-b` < `A-C` < `a-b`), so the names sent are remembered.
    var sent: [String] = []
    sent.reserveCapacity(fields.count)
    for (name, lowercased, value) in fields where !sent.contains(lowercased) {
      sent.append(lowercased)
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

  /// The `User-Agent` sent when the request has none.
  static let userAgent = "Tether"
  /// The `Accept-Encoding` sent when the request has none: nothing is decompressed, so only
  /// the identity coding is acceptable.
  static let acceptEncoding = "identity"

  /// `request` with its headers as ``serialize(_:absoluteForm:proxyAuthorization:hostHeader:)``
  /// sends them: `User-Agent` and `Accept-Encoding` added when missing, and the framing
  /// headers it writes itself (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`)
  /// left out. What an in-process stand-in for a server records (``HTTPExchangeHandler``).
  static func withHeadersAsSent(_ request: HTTPRequest) -> HTTPRequest {
    var sent = request
    for name in request.headers.keys {
      switch name.lowercased() {
      case "host", "content-length", "transfer-encoding", "connection":
        sent.headers.removeValue(forKey: name)
      default: break
      }
    }
    if sent.header("User-Agent") == nil { sent.headers["User-Agent"] = userAgent }
    if sent.header("Accept-Encoding") == nil { sent.headers["Accept-Encoding"] = acceptEncoding }
    return sent
  }

  /// The request target in origin form: the percent-encoded path (`/` when empty) and query.
  ///
  /// It is read off the URL's absolute string (what follows the authority, up to a fragment):
  /// a URL keeps its parts percent-encoded there, so this is the same target as
  /// `URLComponents` would give, without building one on every request.
  static func target(of url: URL) -> String {
    let text = url.absoluteString
    if let start = pathStart(in: text) {
      let rest = text.utf8[start...]
      let end = rest.firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
      let target = Substring(text.utf8[start..<end])
      if target.isEmpty { return "/" }
      return target.utf8.first == UInt8(ascii: "?") ? "/" + target : String(target)
    }
    return componentsTarget(of: url)
  }

  /// Where the path begins in an absolute URL string (`scheme://authority`): the first `/`,
  /// `?` or `#` after the authority, or the end. `nil` for a string without an authority.
  static func pathStart(in text: String) -> String.Index? {
    let utf8 = text.utf8
    guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    let slashes = utf8[colon...].dropFirst()
    guard slashes.starts(with: "//".utf8) else { return nil }
    let authority = slashes.dropFirst(2)
    return authority.firstIndex {
      $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
    }
      ?? authority.endIndex
  }

  /// The target as `URLComponents` gives it: the reference ``target(of:)`` agrees with (the
  /// request fuzzer checks both on every input).
  static func componentsTarget(of url: URL) -> String {
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
/// RFC 9110 token, every header name is a token whose value holds no CR, LF or NUL, and the
/// host holds no control character. Any of these flaws would let a request smuggle a second
/// one (or a header) past the server, or reach another host than the one it names.
enum RequestValidation {
  static func validate(_ request: HTTPRequest) throws(HTTPError) {
    let method = request.method.rawValue
    guard !method.isEmpty, method.utf8.allSatisfy(HeaderParsing.isTokenByte) else {
      throw .invalidRequest("the method \"\(printable(method))\" is not a token")
    }
    for (name, value) in request.headers {
      guard !name.isEmpty, name.utf8.allSatisfy(HeaderParsing.isTokenByte),
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
    try validateHost(of: request.url)
  }

  /// Refuses a URL without a host, or whose host, once percent-decoded, holds a control
  /// character, a space or a delimiter (`/ \ ? # @`): `https://localhost%00.evil.test/`.
  /// Name resolution, SNI and the certificate check stop at a NUL while `Host` and `CONNECT`
  /// carry the whole name (the request would go to, and be verified for, `localhost`), and a
  /// CR or LF would end the `Host` line. Checked before any I/O, for every hop: the request,
  /// each redirect's target and the proxy.
  static func validateHost(of url: URL) throws(HTTPError) {
    guard let host = url.host, !host.isEmpty else {
      throw .invalidRequest("\(HTTPError.redacted(url)) has no host")
    }
    guard !host.utf8.contains(where: isForbiddenInHost) else {
      throw .invalidRequest(
        "the host of \(HTTPError.redacted(url)) holds a control character, a space or a "
          + "delimiter")
    }
  }

  private static func isForbiddenInHost(_ byte: UInt8) -> Bool {
    switch byte {
    case 0...0x20, 0x7F, UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "?"),
      UInt8(ascii: "#"), UInt8(ascii: "@"):
      true
    default: false
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
