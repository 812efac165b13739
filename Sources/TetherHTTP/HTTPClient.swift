import Dispatch
import Foundation
import Synchronization

import Tether

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
/// - Transport: `https` goes through URLSession. Plain `http` goes over Tether's own
///   HTTP/1.1 connections (kept alive and reused; no compression is negotiated; streams do
///   not follow redirects), because on Linux URLSession ends the process on some answers
///   (trailers, a connection closed before any answer). With `http_proxy` or `all_proxy` set
///   in the environment, `http` goes through URLSession too.
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

  let transport: HTTPTransport
  private let lowercasedSensitiveHeaders: Set<String>

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
  public convenience init(
    baseURL: URL, headers: [String: String] = [:], sensitiveHeaders: Set<String> = [],
    timeout: Duration = .seconds(30), maximumResponseSize: Int = 8 << 20,
    maximumRedirects: Int = 5, retryPolicy: HTTPRetryPolicy = .default,
    interceptors: [HTTPInterceptor] = []
  ) {
    self.init(
      baseURL: baseURL, headers: headers, sensitiveHeaders: sensitiveHeaders, timeout: timeout,
      maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects,
      retryPolicy: retryPolicy, interceptors: interceptors, plainHTTPOverSockets: true)
  }

  /// Creates a client, choosing the transport of plain `http` (tests compare the two).
  ///
  /// With `plainHTTPOverSockets` (what the public initializer chooses), plain `http` goes over
  /// Tether's own HTTP/1.1 socket transport: redirects follow the same rules, nothing is
  /// decompressed (none is asked for), and no answer a server sends can end the process (on
  /// Linux, URLSession traps on responses with trailers and on connections closed before any
  /// answer). With a proxy in the environment, and for `https` always, URLSession is used.
  package init(
    baseURL: URL, headers: [String: String] = [:], sensitiveHeaders: Set<String> = [],
    timeout: Duration = .seconds(30), maximumResponseSize: Int = 8 << 20,
    maximumRedirects: Int = 5, retryPolicy: HTTPRetryPolicy = .default,
    interceptors: [HTTPInterceptor] = [], plainHTTPOverSockets: Bool
  ) {
    transport = HTTPTransport(plainHTTPOverSockets: plainHTTPOverSockets)
    self.baseURL = baseURL
    self.headers = headers
    self.sensitiveHeaders = sensitiveHeaders
    self.timeout = timeout
    self.maximumResponseSize = max(0, maximumResponseSize)
    self.maximumRedirects = max(0, maximumRedirects)
    self.retryPolicy = retryPolicy
    self.interceptors = interceptors
    lowercasedSensitiveHeaders = Set(sensitiveHeaders.map { $0.lowercased() })
  }

  deinit { transport.invalidate() }

  // MARK: - Typed endpoints

  /// Sends `endpoint` with `parameters` and `body`, and decodes the response.
  ///
  /// - Throws: ``HTTPError``: a status outside the endpoint's acceptable ones is
  ///   ``HTTPError/status(_:url:bodyExcerpt:retryAfter:)``; a body that does not decode is
  ///   ``HTTPError/undecodable(url:path:reason:)``.
  public func send<Parameters, Body, Response>(
    _ endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body
  ) async throws(HTTPError) -> Response {
    let request = try self.request(for: endpoint, parameters, body: body)
    let response = try await self.response(for: request)
    return try endpoint.decode(response, url: request.url)
  }

  /// Sends a body-less `endpoint` (a `GET` or `DELETE`) with `parameters`.
  public func send<Parameters, Response>(
    _ endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, parameters, body: NoBody())
  }

  /// Sends a body-less `endpoint` that takes no parameters.
  public func send<Response>(
    _ endpoint: Endpoint<NoParameters, NoBody, Response>
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, NoParameters(), body: NoBody())
  }

  /// Sends an `endpoint` that takes no parameters, with `body`.
  public func send<Body, Response>(
    _ endpoint: Endpoint<NoParameters, Body, Response>, body: Body
  ) async throws(HTTPError) -> Response {
    try await send(endpoint, NoParameters(), body: body)
  }

  /// The request `endpoint` makes with `parameters` and `body`: its URL (path placeholders
  /// filled, the other parameters as the query), headers and encoded body.
  ///
  /// - Throws: ``HTTPError/invalidRequest(_:)`` for a placeholder without a parameter or a
  ///   body that cannot be encoded.
  public func request<Parameters, Body, Response>(
    for endpoint: Endpoint<Parameters, Body, Response>, _ parameters: Parameters, body: Body
  ) throws(HTTPError) -> HTTPRequest {
    let url = try endpoint.url(relativeTo: baseURL, parameters)
    var request = HTTPRequest(method: endpoint.method, url: url, headers: headers)
    for (name, value) in endpoint.headers { request.setHeader(name, value) }
    if let (data, contentType) = try endpoint.encode(body) {
      request.body = data
      if request.header("Content-Type") == nil { request.setHeader("Content-Type", contentType) }
    }
    if request.header("Accept") == nil { request.setHeader("Accept", endpoint.accept) }
    return request
  }

  // MARK: - Plain requests

  /// Sends `request` with the client's interceptors, retries and limits, and returns the
  /// response whatever its status.
  ///
  /// - Throws: ``HTTPError`` when no response arrived (or the last attempt's status was a
  ///   transient failure that was retried: then its status error).
  public func response(for request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    var attempt = 1
    var interceptorRetried = false
    while true {
      var prepared = request
      do {
        for interceptor in interceptors { try await interceptor.prepare(&prepared) }
      } catch {
        throw Self.interceptorError(error)
      }
      let outcome: Result<HTTPResponseMessage, HTTPError>
      do {
        outcome = .success(try await perform(prepared))
      } catch {
        outcome = .failure(error)
      }
      if case .success(let response) = outcome, !interceptorRetried {
        var retry = false
        do {
          for interceptor in interceptors
          where try await interceptor.inspect(prepared, response) == .retry {
            retry = true
            break
          }
        } catch {
          throw Self.interceptorError(error)
        }
        if retry {
          interceptorRetried = true
          continue
        }
      }
      // A transient failure of an idempotent request is tried again.
      let failure: HTTPError? =
        switch outcome {
        case .failure(let error): error
        case .success(let response) where HTTPRetryPolicy.isTransientStatus(response.status):
          .status(
            response.status, url: HTTPError.redacted(prepared.url),
            bodyExcerpt: HTTPError.excerpt(of: response.body), retryAfter: response.retryAfter)
        case .success: nil
        }
      guard let failure, HTTPRetryPolicy.isTransient(failure), request.method.isIdempotent,
        attempt < retryPolicy.maximumAttempts,
        let delay = retryPolicy.delay(
          beforeRetry: attempt, retryAfter: failure.retryAfter,
          random: Double.random(in: 0...1))
      else {
        return try outcome.get()
      }
      attempt += 1
      do {
        try await Task.sleep(for: .clamped(seconds: delay))
      } catch {
        throw .cancelled
      }
    }
  }

  /// One attempt, no interceptors, no retries.
  func perform(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    try Self.validateHeaders(of: request)
    let raw: RawHTTPResponse
    do {
      raw = try await transport.perform(
        urlRequest(for: request), limit: maximumResponseSize,
        timeout: (request.timeout ?? timeout).seconds,
        sensitiveHeaders: lowercasedSensitiveHeaders, maximumRedirects: maximumRedirects)
    } catch let error as HTTPError {
      throw error
    } catch {
      throw .cancelled
    }
    var response = HTTPResponseMessage(status: raw.status)
    response.headers = raw.headers
    response.body = raw.body
    return response
  }

  /// Opens `request` as a `text/event-stream` and yields each event as it arrives.
  ///
  /// ```swift
  /// for try await event in client.serverSentEvents(for: request) {
  ///   print(event.event, event.data)
  /// }
  /// ```
  ///
  /// The sequence ends when the server ends the body and throws ``HTTPError`` when the
  /// connection fails or the status is not 200 (no retries: reconnecting is the caller's
  /// choice, with `Last-Event-ID` from the last event's ``ServerSentEvent/id``). An event
  /// larger than ``maximumResponseSize`` is ``HTTPError/tooLarge(url:limit:)``. Cancelling the
  /// consuming task closes the connection.
  public func serverSentEvents(
    for request: HTTPRequest
  ) -> AsyncThrowingStream<ServerSentEvent, any Error> {
    var request = request
    if request.header("Accept") == nil { request.setHeader("Accept", "text/event-stream") }
    let (events, continuation) = AsyncThrowingStream<ServerSentEvent, any Error>.makeStream()
    let parser = Lock(ServerSentEventParser(limit: maximumResponseSize))
    let url = HTTPError.redacted(request.url)
    let cancel = stream(request) { event in
      switch event {
      case .head(let status, let headers):
        if status != 200 {
          continuation.finish(
            throwing: HTTPError.status(
              status, url: url, bodyExcerpt: "",
              retryAfter: headers["retry-after"].flatMap { HeaderParsing.retryAfter($0) }))
        }
      case .chunk(let data):
        do {
          for event in try parser.withLock({ try $0.feed(data) }) { continuation.yield(event) }
        } catch {
          continuation.finish(
            throwing: HTTPError.tooLarge(url: url, limit: parser.withLock { $0.limit }))
        }
      case .end(let error):
        continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in cancel() }
    return events
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
  /// delivers it); interceptors' `prepare` runs. The body stream ends when the server ends
  /// the body and throws ``HTTPError`` when the connection fails. Cancelling the task that
  /// iterates the body (or dropping the stream) closes the connection.
  ///
  /// - Throws: ``HTTPError`` when no head arrives (unreachable, timed out, cancelled).
  public func streamingResponse(
    for request: HTTPRequest
  ) async throws(HTTPError) -> HTTPStreamingResponse {
    var prepared = request
    do {
      for interceptor in interceptors { try await interceptor.prepare(&prepared) }
    } catch {
      throw Self.interceptorError(error)
    }
    let (body, bodyContinuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    let head = Lock<CheckedContinuation<(Int, [String: String]), any Error>?>(nil)
    let timeout = (prepared.timeout ?? self.timeout).seconds
    let url = HTTPError.redacted(prepared.url)
    let cancelBox = Lock<(@Sendable () -> Void)?>(nil)
    do {
      let (status, headers) = try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          head.withLock { $0 = continuation }
          let cancel = stream(prepared) { event in
            switch event {
            case .head(let status, let headers):
              head.withLock { $0.take() }?.resume(returning: (status, headers))
            case .chunk(let data):
              bodyContinuation.yield(data)
            case .end(let error):
              head.withLock { $0.take() }?.resume(throwing: error ?? HTTPError.cancelled)
              bodyContinuation.finish(throwing: error)
            }
          }
          cancelBox.withLock { $0 = cancel }
          bodyContinuation.onTermination = { _ in cancel() }
          DispatchQueue.global().asyncAfter(deadline: .now() + min(timeout, 1e9)) {
            guard let waiting = head.withLock({ $0.take() }) else { return }
            waiting.resume(throwing: HTTPError.timedOut(url: url, after: timeout))
            cancel()
          }
        }
      } onCancel: {
        head.withLock { $0.take() }?.resume(throwing: HTTPError.cancelled)
        cancelBox.withLock { $0 }?()
      }
      return HTTPStreamingResponse(status: status, headers: headers, body: body)
    } catch let error as HTTPError {
      throw error
    } catch {
      throw .cancelled
    }
  }

  /// Opens `request` as a stream: `handler` gets the head, each chunk and the end. The
  /// returned closure cancels it.
  func stream(
    _ request: HTTPRequest, handler: @escaping @Sendable (HTTPTransport.StreamEvent) -> Void
  ) -> @Sendable () -> Void {
    do throws(HTTPError) {
      try Self.validateHeaders(of: request)
    } catch {
      handler(.end(error))
      return {}
    }
    return transport.stream(
      urlRequest(for: request), limit: maximumResponseSize,
      sensitiveHeaders: lowercasedSensitiveHeaders, maximumRedirects: maximumRedirects,
      handler: handler)
  }

  func urlRequest(for request: HTTPRequest) -> URLRequest {
    var urlRequest = URLRequest(
      url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
      timeoutInterval: max(1, (request.timeout ?? timeout).seconds))
    urlRequest.httpMethod = request.method.rawValue
    // One assignment costs a tenth of one `setValue` per header; `setValue` is kept for the
    // rare request whose names repeat in another case (it keeps one of each, as it always did).
    let names = Set(request.headers.keys.lazy.map { $0.lowercased() })
    if names.count == request.headers.count {
      urlRequest.allHTTPHeaderFields = request.headers
    } else {
      for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
    }
    urlRequest.httpBody = request.body
    return urlRequest
  }

  /// Refuses a header whose name is not a token or whose value holds a line break or NUL:
  /// such a header could smuggle a second request, and URLSession would drop it silently.
  static func validateHeaders(of request: HTTPRequest) throws(HTTPError) {
    for (name, value) in request.headers {
      guard !name.isEmpty,
        !name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x3A || $0 >= 0x7F }),
        !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
      else {
        throw .invalidRequest("the header \"\(name)\" has a line break or an invalid name")
      }
    }
  }

  private static func interceptorError(_ error: any Error) -> HTTPError {
    (error as? HTTPError) ?? .interceptorFailed("\(error)")
  }
}

extension HTTPRetryPolicy {
  static func isTransientStatus(_ status: Int) -> Bool {
    [408, 429, 500, 502, 503, 504].contains(status)
  }
}
