import Foundation
import Streams
import Tether
import TetherSupport

/// A response as it came off the wire: status, headers (lower-cased names) and body.
struct RawHTTPResponse: Sendable {
  var status: Int
  var headers: [String: String]
  var body: Data
}

/// A streamed response: the head, and the body still arriving through a bounded buffer.
struct StreamedResponse: Sendable {
  var status: Int
  var headers: [String: String]
  var body: StreamBody
}

/// What moves the bytes of one valid request: the ``SocketEngine`` or the
/// ``URLSessionTransport``. A transport follows no redirect and checks nothing the executor
/// checks already.
protocol Transport: Sendable {
  /// One request and its whole answer, whatever its status, within `timeout` seconds.
  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse
  /// One request whose answer's body is streamed: returns at the head (within
  /// `headTimeout`); the server may then be silent for at most `idleTimeout` between bytes.
  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double, highWater: Int
  ) async throws(HTTPError) -> StreamedResponse
  /// Ends what is in flight; the transport takes nothing new.
  func shutDown()
}

/// The one executor every request of a client goes through, whatever carries it: it runs the
/// interceptors, retries transient failures of idempotent requests (``HTTPRetryPolicy``),
/// checks the request (the method is a token; no header can smuggle a line), picks the
/// transport, keeps one deadline over each attempt's whole chain, and follows redirects by one
/// rule set (``RedirectRule``), for buffered requests and streams alike.
///
/// Transports: on Linux, `http` and `https` go over the ``SocketEngine``, proxied or not;
/// `https` goes through ``URLSessionTransport`` only where OpenSSL cannot be loaded, and so
/// does everything on Apple platforms. The URLSession transport is created the first time one
/// needs it.
final class RequestExecutor: Sendable {
  /// What the executor applies to every request: the client's settings.
  struct Policy: Sendable {
    /// Per attempt, unless the request sets its own.
    var timeout: Duration
    /// The largest buffered body.
    var limit: Int
    var maximumRedirects: Int
    var retryPolicy: HTTPRetryPolicy
    var interceptors: [HTTPInterceptor]
    var streamIdleTimeout: Duration
  }

  let engine: SocketEngine?
  private let urlSession = Lock<URLSessionTransport?>(nil)
  /// A transport that carries every request instead (a test's stub; see
  /// `HTTPClient+Exchange.swift`), installed right after the client is created.
  let replacement = Lock<(any Transport)?>(nil)
  let policy: Policy
  var maximumRedirects: Int { policy.maximumRedirects }
  /// Lower-cased names of the headers stripped on a cross-origin redirect.
  let credentials: Set<String>

  init(engine: SocketEngine?, policy: Policy, sensitiveHeaders: Set<String>) {
    self.engine = engine
    self.policy = policy
    credentials = HTTPRequest.credentialHeaders.union(sensitiveHeaders.map { $0.lowercased() })
  }

  /// The engine for this client, or `nil` when every request must go through URLSession
  /// (asked for, or no platform support). `openSSL` names the libraries `https` needs; a test
  /// names ones that do not exist to force the URLSession fallback.
  static func makeEngine(
    plainHTTPOverSockets: Bool, maximumConnectionsPerOrigin: Int, connectTimeout: Double,
    proxy: HTTPProxy = .none, tls: TLSContextCache.Configuration = .init(),
    openSSL: OpenSSLLibrary.Names = .system
  ) -> SocketEngine? {
    #if os(Linux)
    guard plainHTTPOverSockets, let group = EventLoopGroup.shared else {
      return nil
    }
    return SocketEngine(
      group: group, maximumConnectionsPerOrigin: maximumConnectionsPerOrigin,
      connectTimeout: connectTimeout, idleTimeout: 60, proxy: proxy, tlsConfiguration: tls,
      openSSL: openSSL)
    #else
    return nil
    #endif
  }

  func shutDown() {
    engine?.shutDown()
    urlSession.withLock { $0 }?.shutDown()
  }

  private func transport(for url: URL) -> any Transport {
    if let replacement = replacement.withLock({ $0 }) { return replacement }
    if let engine, engine.carries(url) { return engine }
    return urlSession.withLock { transport in
      if let transport { return transport }
      let created = URLSessionTransport()
      transport = created
      return created
    }
  }

  // MARK: - Attempts, interceptors and retries

  /// Sends `request` with the interceptors and the retry policy, and returns the answer
  /// whatever its status (a transient status that was retried until the attempts ran out is
  /// thrown as its status error).
  func execute(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    var attempt = 1
    var interceptorRetried = false
    while true {
      let prepared = try await prepare(request)
      let outcome: Result<HTTPResponseMessage, HTTPError>
      do {
        let raw = try await perform(
          prepared, limit: policy.limit, timeout: (prepared.timeout ?? policy.timeout).seconds)
        var response = HTTPResponseMessage(status: raw.status)
        response.headers = raw.headers
        response.body = raw.body
        outcome = .success(response)
      } catch {
        outcome = .failure(error)
      }
      if case .success(let response) = outcome, !interceptorRetried {
        var retry = false
        do {
          for interceptor in policy.interceptors
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
        attempt < policy.retryPolicy.maximumAttempts,
        let delay = policy.retryPolicy.delay(
          beforeRetry: attempt, retryAfter: failure.retryAfter)
      else {
        return try outcome.get()
      }
      attempt += 1
      do {
        try await Task.sleep(for: delay)
      } catch {
        throw .cancelled
      }
    }
  }

  /// Opens `request` as a stream after the interceptors' `prepare` (no retries: reconnecting
  /// is the caller's choice).
  func openStream(_ request: HTTPRequest) async throws(HTTPError) -> StreamedResponse {
    let prepared = try await prepare(request)
    return try await stream(
      prepared, headTimeout: (prepared.timeout ?? policy.timeout).seconds,
      idleTimeout: policy.streamIdleTimeout.seconds)
  }

  /// `request` after every interceptor's `prepare`, in order.
  private func prepare(_ request: HTTPRequest) async throws(HTTPError) -> HTTPRequest {
    guard !policy.interceptors.isEmpty else { return request }
    var prepared = request
    do {
      for interceptor in policy.interceptors { try await interceptor.prepare(&prepared) }
    } catch {
      throw Self.interceptorError(error)
    }
    return prepared
  }

  private static func interceptorError(_ error: any Error) -> HTTPError {
    (error as? HTTPError) ?? .interceptorFailed("\(error)")
  }

  // MARK: - Buffered requests

  /// Sends `request`, following redirects, and returns the final answer whatever its status.
  /// `timeout` covers the whole chain.
  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    try RequestValidation.validate(request)
    let deadline = Monotonic.deadline(after: timeout)
    var current = request
    var redirects = 0
    while true {
      let left = Double(deadline &- min(deadline, Monotonic.now)) / 1e9
      guard left > 0 else {
        throw .timedOut(url: HTTPError.redacted(current.url), after: timeout)
      }
      let response = try await transport(for: current.url).perform(
        current, limit: limit, timeout: left)
      guard
        let next = try follow(
          response.status, response.headers, from: current, request, &redirects)
      else { return response }
      current = next
    }
  }

  // MARK: - Streams

  /// Opens `request` as a stream, following redirects; returns at the final head.
  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double,
    highWater: Int = StreamBody.defaultHighWater
  ) async throws(HTTPError) -> StreamedResponse {
    try RequestValidation.validate(request)
    var current = request
    var redirects = 0
    while true {
      let response = try await transport(for: current.url).stream(
        current, headTimeout: headTimeout, idleTimeout: idleTimeout, highWater: highWater)
      let next: HTTPRequest?
      do throws(HTTPError) {
        next = try follow(response.status, response.headers, from: current, request, &redirects)
      } catch {
        response.body.consumerGone()
        throw error
      }
      guard let next else { return response }
      response.body.consumerGone()
      current = next
    }
  }

  // MARK: - Redirects

  /// The request that follows the answer `status`/`headers` to `current`, or `nil` when the
  /// answer is final.
  private func follow(
    _ status: Int, _ headers: [String: String], from current: HTTPRequest,
    _ original: HTTPRequest, _ redirects: inout Int
  ) throws(HTTPError) -> HTTPRequest? {
    guard [301, 302, 303, 307, 308].contains(status), let location = headers["location"] else {
      return nil
    }
    redirects += 1
    let target = URL(string: location, relativeTo: current.url)?.absoluteURL
    switch RedirectRule.decide(
      original: original.url, previous: current.url, target: target, redirects: redirects,
      maximumRedirects: maximumRedirects, headerNames: Array(current.headers.keys),
      sensitiveHeaders: credentials)
    {
    case .refuse(let error):
      throw error
    case .follow(let stripped):
      var next = current
      next.url = target!
      for name in stripped { next.headers.removeValue(forKey: name) }
      // As browsers and URLSession do: 303, and 301/302 after a POST, continue with a GET.
      if status == 303 || (status <= 302 && current.method == .post) {
        next.method = .get
        next.body = nil
        next.setHeader("Content-Type", nil)
      }
      return next
    }
  }
}
