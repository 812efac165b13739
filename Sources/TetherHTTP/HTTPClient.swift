import Dispatch
import Foundation
import Streams
import Synchronization
import Tether
import TetherSupport

/// Sends typed ``Endpoint``s (and plain ``HTTPRequest``s) to one server.
///
/// ```swift
/// let api = HTTPClient(
///   baseURL: URL(string: "https://api.example.com")!,
///   headers: ["Authorization": "Bearer …"])
/// let repos = try await api.send(GitHub.repos, UserRepos(user: "apple"))
/// ```
///
/// - Headers: `headers` go with every request; `Authorization`, `Cookie`,
///   `Proxy-Authorization` and every name in `sensitiveHeaders` are credentials: they are
///   never sent to another origin on a redirect and never appear in errors.
/// - Limits: each attempt must complete within `timeout`; a body larger than
///   `maximumResponseSize` (counted after decompression) stops the transfer with
///   ``HTTPError/tooLarge(url:limit:)``. At most `maximumRedirects` redirects are followed,
///   never from `https` to `http`.
/// - Retries follow `retryPolicy` (idempotent requests only); `interceptors` run around
///   each attempt.
/// - Transport: on Linux, `http` and `https` go over Tether's own event-driven engine: a few
///   I/O threads for the whole process (never Swift's cooperative pool), at most
///   `maximumConnectionsPerOrigin` kept-alive connections per origin (8 by default; more
///   requests wait their turn in order), idle connections closed after 60 s, no compression
///   negotiated. Each stream (``serverSentEvents(for:)``, ``streamingResponse(for:)``) has a
///   connection of its own and a bounded buffer (256 KiB): when its consumer lags, the socket
///   is not read and TCP slows the server down.
/// - TLS: `https` uses the system OpenSSL 3 or 1.1.1 (loaded at run time): the system
///   trust store plus `trustedCertificates`, the host name verified, SNI, ALPN `http/1.1`,
///   TLS 1.2 or later. A certificate that fails is
///   ``HTTPError/unreachable(url:reason:)-enum.case`` whose reason names the cause ("certificate
///   expired", "certificate not trusted …", "certificate is for another host") and whose
///   `tlsRefusal` says which, never retried. Where OpenSSL cannot be loaded, an `https` request
///   fails with ``HTTPError/unreachable(url:reason:)-enum.case`` saying so (never retried);
///   TetherHTTP does not fall back to URLSession on Linux, so it never loads libcurl. To send
///   requests through URLSession instead, `import TetherURLSession` and call `useURLSession()`
///   on the client. On Apple platforms everything goes through URLSession. Redirects, the deadline
///   and the request checks are the same for every transport.
/// - Proxies: `proxy` (``HTTPProxy/environment`` by default: `http_proxy`, `https_proxy`,
///   `all_proxy`, `no_proxy`, read when the client is made). `http` goes to the proxy in
///   absolute form, `https` through a `CONNECT` tunnel; proxy credentials reach the proxy only.
///
/// A client is `Sendable`: share one per server. Its connections close when it is released.
public final class HTTPClient: Sendable {
  /// The URL every endpoint path is appended to.
  public let baseURL: URL
  /// Headers sent with every request (an endpoint's own headers win).
  public let headers: [String: String]
  /// Header names (case-insensitive) that are credentials besides `Authorization`, `Cookie`
  /// and `Proxy-Authorization`, such as `X-API-Key`.
  public let sensitiveHeaders: Set<String>
  /// How long one attempt may take, from sending to the last byte of the body.
  public let timeout: Duration
  /// The largest body accepted, in bytes (after decompression).
  public let maximumResponseSize: Int
  /// The most redirects followed for one request.
  public let maximumRedirects: Int
  /// When failed requests are repeated.
  public let retryPolicy: HTTPRetryPolicy
  /// Steps run around every request, in order.
  public let interceptors: [HTTPInterceptor]
  /// The most connections open at once to one origin (scheme, host, port) for buffered
  /// requests; more requests wait their turn, oldest first. Streams are not counted: each
  /// has a connection of its own.
  public let maximumConnectionsPerOrigin: Int
  /// How long a stream's server may stay silent, once the head arrived, before the stream
  /// ends with ``HTTPError/timedOut(url:after:)`` (time the consumer lags does not count).
  public let streamIdleTimeout: Duration
  /// Certificate authorities (PEM) trusted for `https` besides the system's.
  public let trustedCertificates: [String]
  /// The proxies requests go through (``HTTPProxy/environment`` unless the client was given
  /// another), as read when the client was made.
  public let proxy: HTTPProxy

  let executor: RequestExecutor
  /// The URLs this client's endpoints made lately.
  let endpointURLs = EndpointURLs()

  /// Creates a client for the server at `baseURL`.
  ///
  /// - Parameters:
  ///   - baseURL: The URL every endpoint path is appended to (its path and query are kept).
  ///   - headers: Headers sent with every request.
  ///   - sensitiveHeaders: Header names that are credentials, besides `Authorization`,
  ///     `Cookie` and `Proxy-Authorization`.
  ///   - timeout: Per attempt; default 30 s.
  ///   - maximumResponseSize: Default 8 MiB.
  ///   - maximumRedirects: Default 5.
  ///   - retryPolicy: When failed requests are repeated; default ``HTTPRetryPolicy/default``.
  ///   - interceptors: Steps run around every request, in order.
  ///   - maximumConnectionsPerOrigin: Default 8.
  ///   - streamIdleTimeout: How long a stream's server may stay silent; default 5 minutes.
  ///   - trustedCertificates: Certificate authorities in PEM (each string may hold several)
  ///     trusted for `https` besides the system's, such as a company's or a test's own CA.
  ///     A PEM with no certificate fails every `https` request with a reason saying so.
  ///   - proxy: The proxies to use; default ``HTTPProxy/environment``. ``HTTPProxy/none``
  ///     ignores the environment.
  public convenience init(
    baseURL: URL, headers: [String: String] = [:], sensitiveHeaders: Set<String> = [],
    timeout: Duration = .seconds(30), maximumResponseSize: Int = 8 << 20,
    maximumRedirects: Int = 5, retryPolicy: HTTPRetryPolicy = .default,
    interceptors: [HTTPInterceptor] = [], maximumConnectionsPerOrigin: Int = 8,
    streamIdleTimeout: Duration = .seconds(300), trustedCertificates: [String] = [],
    proxy: HTTPProxy = .environment
  ) {
    self.init(
      baseURL: baseURL, headers: headers, sensitiveHeaders: sensitiveHeaders, timeout: timeout,
      maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects,
      retryPolicy: retryPolicy, interceptors: interceptors,
      maximumConnectionsPerOrigin: maximumConnectionsPerOrigin,
      streamIdleTimeout: streamIdleTimeout, trustedCertificates: trustedCertificates,
      proxy: proxy, plainHTTPOverSockets: true)
  }

  /// Creates a client, choosing the transport of plain `http` (tests compare the two).
  ///
  /// With `plainHTTPOverSockets` (what the public initializer chooses), `http` goes over
  /// Tether's own engine on Linux: redirects follow the same rules, nothing is decompressed
  /// (none is asked for), and no answer a server sends can end the process (on Linux,
  /// URLSession traps on responses with trailers and on connections closed before any
  /// answer). `https` goes over the engine too where OpenSSL loads. Without it (a stand-in's
  /// client), a request on Linux needs a replacement transport, or fails.
  ///
  /// `clientCertificatePEM` and `clientKeyPEM` are the identity presented to servers that ask
  /// for a client certificate (mutual TLS, as etcd deployments use); one without the other
  /// fails every `https` request with a reason naming the missing half; `clientKeyPassphrase`
  /// decrypts an encrypted `clientKeyPEM` (an encrypted key without it fails every `https`
  /// request at once, with a reason saying so, and never prompts);
  /// `openSSLLibraries` (`libssl` and `libcrypto` file names) lets a test name libraries that
  /// do not exist, as on a machine without OpenSSL: `https` then fails with a reason saying so.
  package init(
    baseURL: URL, headers: [String: String] = [:], sensitiveHeaders: Set<String> = [],
    timeout: Duration = .seconds(30), maximumResponseSize: Int = 8 << 20,
    maximumRedirects: Int = 5, retryPolicy: HTTPRetryPolicy = .default,
    interceptors: [HTTPInterceptor] = [], maximumConnectionsPerOrigin: Int = 8,
    streamIdleTimeout: Duration = .seconds(300), trustedCertificates: [String] = [],
    clientCertificatePEM: String? = nil, clientKeyPEM: String? = nil,
    clientKeyPassphrase: String? = nil, proxy: HTTPProxy = .environment,
    openSSLLibraries: (ssl: String, crypto: String)? = nil,
    plainHTTPOverSockets: Bool
  ) {
    var identity: TLSContext.ClientIdentity?
    if clientCertificatePEM != nil || clientKeyPEM != nil {
      identity = TLSContext.ClientIdentity(
        certificatePEM: clientCertificatePEM ?? "", privateKeyPEM: clientKeyPEM ?? "",
        privateKeyPassphrase: clientKeyPassphrase)
    }
    let openSSL =
      openSSLLibraries.map { OpenSSLLibrary.Names(ssl: $0.ssl, crypto: $0.crypto) } ?? .system
    executor = RequestExecutor(
      engine: RequestExecutor.makeEngine(
        plainHTTPOverSockets: plainHTTPOverSockets,
        maximumConnectionsPerOrigin: maximumConnectionsPerOrigin,
        connectTimeout: timeout.seconds, proxy: proxy,
        tls: TLSContextCache.Configuration(
          trustedCertificates: trustedCertificates, clientIdentity: identity),
        openSSL: openSSL),
      policy: RequestExecutor.Policy(
        timeout: timeout, limit: max(0, maximumResponseSize),
        maximumRedirects: max(0, maximumRedirects), retryPolicy: retryPolicy,
        interceptors: interceptors, streamIdleTimeout: streamIdleTimeout),
      sensitiveHeaders: sensitiveHeaders, openSSL: openSSL)
    self.maximumConnectionsPerOrigin = max(1, maximumConnectionsPerOrigin)
    self.streamIdleTimeout = streamIdleTimeout
    self.trustedCertificates = trustedCertificates
    self.proxy = proxy
    self.baseURL = baseURL
    self.headers = headers
    self.sensitiveHeaders = sensitiveHeaders
    self.timeout = timeout
    self.maximumResponseSize = max(0, maximumResponseSize)
    self.maximumRedirects = max(0, maximumRedirects)
    self.retryPolicy = retryPolicy
    self.interceptors = interceptors
  }

  deinit { executor.shutDown() }

  // MARK: - Plain requests

  /// Sends `request` with the client's default headers (the request's own win), interceptors,
  /// retries and limits, and returns the response whatever its status.
  ///
  /// - Throws: ``HTTPError`` when no response arrived (or the last attempt's status was a
  ///   transient failure that was retried: then its status error).
  public func response(for request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    try await executor.execute(withDefaultHeaders(request))
  }

  /// `request` with every default header it does not set itself.
  func withDefaultHeaders(_ request: HTTPRequest) -> HTTPRequest {
    guard !headers.isEmpty else { return request }
    var request = request
    for (name, value) in headers where request.header(name) == nil {
      request.headers[name] = value
    }
    return request
  }

  /// Opens `request` as a `text/event-stream` and yields each event as it arrives.
  ///
  /// ```swift
  /// for try await event in client.serverSentEvents(for: request) {
  ///   print(event.event, event.data)
  /// }
  /// ```
  ///
  /// The request is sent when the loop first asks for an event. The sequence ends when the
  /// server ends the body and throws ``HTTPError`` when the connection fails, the server stays
  /// silent for ``streamIdleTimeout``, or the status is not 200 (no retries: reconnecting is
  /// the caller's choice, with `Last-Event-ID` from the last event's ``ServerSentEvent/id``).
  /// Events are read from the network only as fast as the loop takes them (at most 256 KiB
  /// wait unread). An event larger than ``maximumResponseSize`` is
  /// ``HTTPError/tooLarge(url:limit:)``. Cancelling the consuming task, or dropping the
  /// sequence, closes the connection.
  public func serverSentEvents(
    for request: HTTPRequest
  ) -> AsyncThrowingStream<ServerSentEvent, any Error> {
    let source = Lock<EventSource?>(nil)
    return AsyncThrowingStream { [self] in
      let events: EventSource
      if let open = source.withLock({ $0 }) {
        events = open
      } else {
        events = try await openEvents(request)
        guard events.status == 200 else {
          throw HTTPError.status(
            events.status, url: HTTPError.redacted(request.url), bodyExcerpt: "",
            retryAfter: events.headers["retry-after"].flatMap { HeaderParsing.retryAfter($0) })
        }
        source.withLock { $0 = events }
      }
      return try await events.next()
    }
  }

  /// Opens `request` as an event stream (interceptors' `prepare` runs) and returns at its
  /// head: the status is the caller's to check.
  func openEvents(_ request: HTTPRequest) async throws(HTTPError) -> EventSource {
    var request = request
    if request.header("Accept") == nil { request.setHeader("Accept", "text/event-stream") }
    let response = try await openStream(request)
    return EventSource(response, url: request.url, limit: maximumResponseSize)
  }

  /// Sends `request` and returns as soon as the head arrives, with the body as a stream of
  /// chunks read as they arrive: for long-lived responses such as a watch.
  ///
  /// ```swift
  /// let response = try await client.streamingResponse(for: watchRequest)
  /// guard response.status == 200 else { … }
  /// for try await chunk in response.body { parser.feed(chunk) }
  /// ```
  ///
  /// No retries and no size limit on the whole body (each chunk is as small as the network
  /// delivers it); default headers are added and interceptors' `prepare` runs; redirects are
  /// followed. The head must arrive within ``timeout``; then the server may stay silent for at
  /// most ``streamIdleTimeout``. The body is read only as fast as it is consumed (at most
  /// 256 KiB wait unread; the server is slowed down by TCP). The body stream ends when the
  /// server ends the body and throws ``HTTPError`` when the connection fails. Cancelling the
  /// task that iterates the body (or dropping the stream) closes the connection.
  ///
  /// - Throws: ``HTTPError`` when no head arrives (unreachable, timed out, cancelled).
  public func streamingResponse(
    for request: HTTPRequest
  ) async throws(HTTPError) -> HTTPStreamingResponse {
    let response = try await openStream(request)
    return HTTPStreamingResponse(
      status: response.status, headers: response.headers, body: response.body.stream())
  }

  private func openStream(_ request: HTTPRequest) async throws(HTTPError) -> StreamedResponse {
    try await executor.openStream(withDefaultHeaders(request))
  }

}

extension HTTPRetryPolicy {
  static func isTransientStatus(_ status: Int) -> Bool {
    [408, 429, 500, 502, 503, 504].contains(status)
  }
}
