import Foundation
import Streams
import Tether
import TetherSupport

/// A response as it came off the wire: status, headers (lower-cased names) and body.
package struct RawHTTPResponse: Sendable {
  package var status: Int
  package var headers: [String: String]
  package var body: Data

  package init(status: Int, headers: [String: String], body: Data) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// A streamed response: the head, and the body still arriving through a bounded buffer.
package struct StreamedResponse: Sendable {
  package var status: Int
  package var headers: [String: String]
  package var body: StreamBody

  package init(status: Int, headers: [String: String], body: StreamBody) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}

/// What moves the bytes of one valid request: the ``SocketEngine``, a test's stand-in, or
/// (TetherURLSession's, and Apple platforms') URLSession transport. A transport follows no
/// redirect and checks nothing the executor checks already.
package protocol Transport: Sendable {
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
/// Transports: on Linux, `http` and `https` go over the ``SocketEngine``, proxied or not, and
/// nothing else: where its I/O loops cannot start, or OpenSSL cannot be loaded for `https`,
/// the request fails with ``HTTPError/unreachable(url:reason:)-enum.case`` naming the cause
/// (there is no silent fallback, and TetherHTTP never links FoundationNetworking, so no
/// libcurl). A client opts into URLSession with TetherURLSession's `useURLSession()` (``replacement``). On Apple
/// platforms everything goes through URLSession, created the first time a request needs it.
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
  #if canImport(Darwin)
  private let urlSession = Lock<URLSessionTransport?>(nil)
  #endif
  /// The OpenSSL libraries the engine was asked to load, to say why `https` has no transport.
  private let openSSL: OpenSSLLibrary.Names
  /// A transport that carries every request instead (a test's stub, or URLSession; see
  /// `HTTPClient+Exchange.swift`), installed right after the client is created.
  let replacement = Lock<(any Transport)?>(nil)
  let policy: Policy
  var maximumRedirects: Int { policy.maximumRedirects }
  /// Lower-cased names of the headers stripped on a cross-origin redirect.
  let credentials: Set<String>

  init(
    engine: SocketEngine?, policy: Policy, sensitiveHeaders: Set<String>,
    openSSL: OpenSSLLibrary.Names = .system
  ) {
    self.engine = engine
    self.openSSL = openSSL
    self.policy = policy
    credentials = HTTPRequest.credentialHeaders.union(sensitiveHeaders.map { $0.lowercased() })
  }

  /// The engine for this client, or `nil` when there is none (not asked for, the I/O loops
  /// could not start, or not Linux). `openSSL` names the libraries `https` needs; a test names
  /// ones that do not exist to see the error a machine without OpenSSL gives.
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
    replacement.withLock { $0 }?.shutDown()
    #if canImport(Darwin)
    urlSession.withLock { $0 }?.shutDown()
    #endif
  }

  /// What carries a request to `url`: the replacement, else the engine; on Linux nothing else.
  ///
  /// - Throws: ``HTTPError/unreachable(url:reason:)-enum.case`` when no transport can carry it,
  ///   with a reason naming what is missing and the way to opt into URLSession.
  private func transport(for url: URL) throws(HTTPError) -> any Transport {
    if let replacement = replacement.withLock({ $0 }) { return replacement }
    if let engine, engine.carries(url) { return engine }
    #if canImport(Darwin)
    return urlSession.withLock { transport in
      if let transport { return transport }
      let created = URLSessionTransport()
      transport = created
      return created
    }
    #else
    throw .unreachable(url: HTTPError.redacted(url), reason: missingTransport(for: url))
    #endif
  }

  /// Why no transport carries `url` on this machine, and what to do about it.
  private func missingTransport(for url: URL) -> String {
    let remedy = "or import TetherURLSession and call `useURLSession()` on the client"
    guard engine != nil else {
      return "no transport: the HTTP engine's I/O loops could not start (epoll and eventfd "
        + "are needed), \(remedy)"
    }
    let scheme = url.scheme?.lowercased() ?? ""
    guard scheme == "https" else { return "no transport for the scheme '\(scheme)'" }
    let library = openSSL == .system ? OpenSSLLibrary.shared : OpenSSLLibrary.load(openSSL)
    var detail = "OpenSSL could not be loaded"
    if case .failure(let failure) = library { detail = failure.reason }
    return "no transport for https: \(detail); install OpenSSL (libssl), \(remedy)"
  }

  /// Throws the error `request` would end in when nothing can carry it, before any attempt: a
  /// missing library is not a transient failure, so it is never retried. A request that is
  /// invalid as given is left to the attempt, which refuses it after the interceptors ran.
  private func checkTransport(for request: HTTPRequest) throws(HTTPError) {
    guard (try? RequestValidation.validate(request)) != nil else { return }
    _ = try transport(for: request.url)
  }

  // MARK: - Attempts, interceptors and retries

  /// Sends `request` with the interceptors and the retry policy, and returns the answer
  /// whatever its status (a transient status that was retried until the attempts ran out is
  /// thrown as its status error).
  func execute(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    var attempt = 1
    var interceptorRetried = false
    try checkTransport(for: request)
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
        Self.mayRepeat(request, after: failure), attempt < policy.retryPolicy.maximumAttempts,
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

  /// Whether `request` may be sent again after `failure`. A conditional write (`If-Match` or
  /// `If-None-Match` on a `PUT` or `DELETE`) only when it cannot have been applied: the server
  /// was not reached, or it answered with a transient status. After a timeout or a cut-off
  /// answer its outcome is unknown, and a second attempt would meet the first one's write as a
  /// conflict (`412`), which a caller re-applying its change on conflicts (`update`) would
  /// apply twice; the error goes to the caller instead.
  static func mayRepeat(_ request: HTTPRequest, after failure: HTTPError) -> Bool {
    guard request.method != .get, request.method != .head,
      request.header("If-Match") != nil || request.header("If-None-Match") != nil
    else { return true }
    switch failure {
    case .unreachable, .status: return true
    default: return false
    }
  }

  /// Opens `request` as a stream after the interceptors' `prepare` (no retries: reconnecting
  /// is the caller's choice).
  func openStream(_ request: HTTPRequest) async throws(HTTPError) -> StreamedResponse {
    try checkTransport(for: request)
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
