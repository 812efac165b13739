import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which HTTP proxy an ``HTTPClient`` sends its requests through, if any.
///
/// ```swift
/// // What curl and most tools do: http_proxy, https_proxy, all_proxy and no_proxy.
/// let fromEnvironment = HTTPClient(baseURL: api, proxy: .environment)
/// // One proxy for everything but the internal hosts, with credentials for the proxy only.
/// let explicit = HTTPClient(
///   baseURL: api,
///   proxy: .all(URL(string: "http://user:secret@proxy.internal:3128")!, bypass: [".internal"]))
/// ```
///
/// - `http` URLs go to the proxy in absolute form (`GET http://host/path HTTP/1.1`); `https`
///   URLs open a `CONNECT` tunnel through it, and TLS runs end to end with the origin, whose
///   certificate is verified as without a proxy.
/// - Credentials in the proxy URL's user information become `Proxy-Authorization: Basic …`
///   and go only to the proxy: on the `CONNECT` request, or on an absolute-form request the
///   proxy consumes. They never reach the origin and never appear in errors.
/// - The proxy itself is spoken to in plain `http` (a `http://` proxy URL, or one written
///   without a scheme such as `proxy:3128`); other schemes are refused with
///   ``HTTPError/invalidRequest(_:)``.
/// - ``bypass`` lists hosts reached directly, written as `no_proxy` does: `example.com`
///   (that host and its subdomains), `.example.com` (the same), `*` (every host), an IP
///   address, or an IPv4 range such as `10.0.0.0/8`.
public struct HTTPProxy: Sendable, Hashable {
  /// The proxy for `http` URLs, or `nil` to reach them directly.
  public var http: URL?
  /// The proxy for `https` URLs (reached through `CONNECT`), or `nil` to reach them directly.
  public var https: URL?
  /// Hosts reached without a proxy (`no_proxy` syntax).
  public var bypass: [String]

  /// A setting with a proxy for each scheme (`nil`: that scheme goes directly).
  public init(http: URL? = nil, https: URL? = nil, bypass: [String] = []) {
    self.http = http
    self.https = https
    self.bypass = bypass
  }

  /// No proxy: every request goes directly to its server, whatever the environment says.
  public static let none = HTTPProxy()

  /// `proxy` for both `http` and `https`, except the hosts in `bypass`.
  public static func all(_ proxy: URL, bypass: [String] = []) -> HTTPProxy {
    HTTPProxy(http: proxy, https: proxy, bypass: bypass)
  }

  /// The proxies the process environment names, read when this is called (an ``HTTPClient``
  /// reads it once, when it is created): `http_proxy`, `https_proxy`, `all_proxy` (for a
  /// scheme without its own) and `no_proxy`, lower-case first, then the upper-case forms.
  /// A proxy of a kind Tether does not speak (`socks5://`, `https://`) is left out, as if the
  /// variable were unset.
  public static var environment: HTTPProxy {
    HTTPProxy(environment: ProcessInfo.processInfo.environment)
  }

  /// The proxies `environment` names (see ``environment``).
  init(environment: [String: String]) {
    func value(_ name: String) -> String? {
      for key in [name, name.uppercased()] {
        if let value = environment[key]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
          return value
        }
      }
      return nil
    }
    let all = value("all_proxy").flatMap(Self.proxyURL)
    http = value("http_proxy").flatMap(Self.proxyURL) ?? all
    https = value("https_proxy").flatMap(Self.proxyURL) ?? all
    bypass = (value("no_proxy") ?? "").split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }.filter { !$0.isEmpty }
  }

  /// A proxy URL as the environment writes it: `http://host:port`, or `host:port` alone;
  /// `nil` for another kind of proxy.
  private static func proxyURL(_ text: String) -> URL? {
    let withScheme = text.contains("://") ? text : "http://" + text
    guard let url = URL(string: withScheme), url.scheme?.lowercased() == "http",
      url.host?.isEmpty == false
    else { return nil }
    return url
  }

  /// The proxy a request to `url` goes through, or `nil` to go directly.
  ///
  /// - Throws: ``HTTPError/invalidRequest(_:)`` for a proxy that is not `http://`.
  func proxy(for url: URL) throws(HTTPError) -> URL? {
    let scheme = url.scheme?.lowercased()
    guard let proxy = scheme == "https" ? https : scheme == "http" ? http : nil,
      let host = url.host, !bypasses(host)
    else { return nil }
    guard proxy.scheme?.lowercased() == "http", proxy.host?.isEmpty == false else {
      throw .invalidRequest(
        "the proxy \(HTTPError.redacted(proxy)) is not an http:// proxy (the only kind supported)")
    }
    return proxy
  }

  /// Whether `host` is reached directly.
  func bypasses(_ host: String) -> Bool {
    let host = Self.bare(host.lowercased())
    for entry in bypass {
      var pattern = entry.lowercased()
      if pattern == "*" { return true }
      if pattern.contains("/") {
        if Self.inIPv4Range(host, pattern) { return true }
        continue
      }
      pattern = Self.bare(Self.withoutPort(pattern))
      if pattern.hasPrefix("*.") { pattern.removeFirst(2) }
      if pattern.hasPrefix(".") { pattern.removeFirst() }
      guard !pattern.isEmpty else { continue }
      if host == pattern || host.hasSuffix("." + pattern) { return true }
    }
    return false
  }

  private static func bare(_ host: String) -> String {
    host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
  }

  /// `host:port` → `host`; an IPv6 literal (several colons, no brackets) is kept.
  private static func withoutPort(_ entry: String) -> String {
    if entry.hasPrefix("["), let end = entry.firstIndex(of: "]") {
      return String(entry[...end])
    }
    let colons = entry.filter { $0 == ":" }.count
    guard colons == 1, let colon = entry.firstIndex(of: ":") else { return entry }
    return String(entry[..<colon])
  }

  /// Whether `host` is an IPv4 address inside `range` (`a.b.c.d/bits`).
  private static func inIPv4Range(_ host: String, _ range: String) -> Bool {
    let parts = range.split(separator: "/")
    guard parts.count == 2, let bits = Int(parts[1]), (0...32).contains(bits),
      let network = ipv4(String(parts[0])), let address = ipv4(host)
    else { return false }
    let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - UInt32(bits))
    return network & mask == address & mask
  }

  private static func ipv4(_ text: String) -> UInt32? {
    var address = in_addr()
    guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
    return UInt32(bigEndian: address.s_addr)
  }
}
