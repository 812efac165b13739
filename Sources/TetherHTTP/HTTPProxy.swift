import Foundation

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
///   without a scheme such as `proxy:3128`); a request that would go through a proxy of
///   another scheme, given here or read from the environment, fails with
///   ``HTTPError/invalidRequest(_:)``.
/// - ``bypass`` lists hosts reached directly, by curl's documented `NO_PROXY` rules:
///   `example.com` (that host and its subdomains), `.example.com` (the same), `*` alone (every
///   host; the only wildcard, so `*.example.com` matches nothing), an IP address, or a range
///   such as `10.0.0.0/8` or `fd00::/8`. Entries are trimmed; a trailing dot is ignored.
/// - Descriptions, `dump` and mirrors show a proxy's password as `***`.
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
  /// A proxy of a kind Tether does not speak (`socks5://`, `https://`) is kept, and every
  /// request it would carry fails with ``HTTPError/invalidRequest(_:)`` saying so: requests
  /// the environment sends through a proxy never go directly behind its back. Pass an explicit
  /// setting (or ``none``) to a client that must ignore it.
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

  /// A proxy URL as the environment writes it: `scheme://host:port`, or `host:port` alone (an
  /// `http` proxy); `nil` for text that is not a URL with a host. A scheme other than `http`
  /// is kept, for ``proxy(for:)`` to refuse.
  private static func proxyURL(_ text: String) -> URL? {
    let withScheme = text.contains("://") ? text : "http://" + text
    guard let url = URL(string: withScheme), url.host?.isEmpty == false else { return nil }
    return url
  }

  /// The proxy a request to `url` goes through, or `nil` to go directly.
  ///
  /// - Throws: ``HTTPError/invalidRequest(_:)`` for a proxy that is not `http://`, or whose
  ///   host holds a control character (see ``RequestValidation/validateHost(of:)``).
  func proxy(for url: URL) throws(HTTPError) -> URL? {
    let scheme = url.scheme?.lowercased()
    guard let proxy = scheme == "https" ? https : scheme == "http" ? http : nil,
      let host = url.host, !bypasses(host)
    else { return nil }
    guard proxy.scheme?.lowercased() == "http", proxy.host?.isEmpty == false else {
      throw .invalidRequest(
        "the proxy \(HTTPError.redacted(proxy)) is not an http:// proxy (the only kind "
          + "supported); give the client an http:// proxy, or HTTPProxy.none to go directly")
    }
    try RequestValidation.validateHost(of: proxy)
    return proxy
  }

  /// Whether `host` is reached directly (``ProxyBypassList``: curl's `NO_PROXY` rules).
  func bypasses(_ host: String) -> Bool {
    ProxyBypassList(bypass).contains(host: host)
  }
}

extension HTTPProxy: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// The proxies and the bypass list, with any password in a proxy URL shown as `***`:
  /// `HTTPProxy(http: http://user:***@proxy:3128, https: nil, bypass: [".internal"])`.
  public var description: String {
    "HTTPProxy(http: \(Self.shown(http)), https: \(Self.shown(https)), bypass: \(bypass))"
  }

  /// The same as ``description``: the password never appears.
  public var debugDescription: String { description }

  /// A mirror whose proxy URLs have their password replaced by `***`, so that `dump` and
  /// any mirror-based printing of a value holding a proxy never show the password.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "http": Self.redacted(http) as Any, "https": Self.redacted(https) as Any,
        "bypass": bypass,
      ], displayStyle: .struct)
  }

  private static func shown(_ url: URL?) -> String {
    redacted(url).map(\.absoluteString) ?? "nil"
  }

  /// `url` with its password (if any) replaced by `***`; the user name is kept.
  static func redacted(_ url: URL?) -> URL? {
    guard let url, url.password != nil else { return url }
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
      return nil
    }
    components.percentEncodedPassword = "***"
    return components.url
  }
}
