// One file, two modules: TetherHTTP compiles it on Apple platforms, where URLSession is its
// transport (Sources/TetherHTTP/Internal/URLSessionTransport.swift is a symbolic link to this
// file), and TetherURLSession compiles it everywhere (its target defines
// TETHER_URLSESSION_MODULE) for clients that opt in. TetherHTTP on Linux never compiles it, so
// it never imports FoundationNetworking and never links libcurl.
#if canImport(Darwin) || TETHER_URLSESSION_MODULE
import Dispatch
import Foundation
import Streams
import TetherSupport

// TetherHTTP's own compilation of this file must not import itself.
#if TETHER_URLSESSION_MODULE
import TetherHTTP
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession transport: every request on Apple platforms, and every request of a client
/// that called TetherURLSession's `useURLSession()`. It moves the bytes of one
/// already-validated request; the ``RequestExecutor`` above it follows redirects (the session
/// is told never to), keeps the deadline and checks the request, the same way for this
/// transport and the ``SocketEngine``.
///
/// - Bodies arrive chunk by chunk through `URLSessionDataDelegate`, and a transfer stops as
///   soon as it passes its size limit (the bytes counted are the decoded ones, so a gzip bomb
///   stops at the limit too).
/// - Our own deadline per transfer (URLSession's timeout is an idle timeout that a slow
///   trickle of bytes resets).
/// - Streams hand each chunk to a ``StreamBody``; when its consumer lags, the task is
///   suspended until the consumer catches up.
final class URLSessionTransport: NSObject, URLSessionDataDelegate, Transport, @unchecked Sendable {
  // Sendable: all mutable state is in `transfers`, a `Lock`; `session` is set once in `init`.

  /// How one transfer hands its outcome back.
  private enum Sink {
    /// Collect the body and resume once with the whole response.
    case buffer(CheckedContinuation<RawHTTPResponse, any Error>)
    /// Hand the head, then each chunk, then the end to `handler` as they arrive.
    case stream(@Sendable (StreamEvent) -> Void)
  }

  /// What a streaming transfer reports, in order: `head` once, `chunk`s, then `end`.
  private enum StreamEvent: Sendable {
    case head(status: Int, headers: [String: String])
    case chunk(Data)
    case end(HTTPError?)
  }

  private struct Transfer {
    let sink: Sink
    let limit: Int
    let url: URL
    var response: HTTPURLResponse?
    var body = Data()
    var received = 0
  }

  private let transfers = Lock<[Int: Transfer]>([:])
  private(set) var session: URLSession!

  override init() {
    super.init()
    let configuration = URLSessionConfiguration.ephemeral
    // Conditional requests are ours to make; a URL cache would answer them itself.
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.timeoutIntervalForRequest = 3600
    session = URLSession(
      configuration: configuration, delegate: self, delegateQueue: InlineOperationQueue())
  }

  /// Ends every transfer; the transport is unusable afterwards.
  func shutDown() {
    session.invalidateAndCancel()
  }

  /// `request` as URLSession takes it; `idleTimeout` is URLSession's own (reset by each byte).
  static func urlRequest(for request: HTTPRequest, idleTimeout: Double) -> URLRequest {
    var urlRequest = URLRequest(
      url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
      timeoutInterval: max(1, min(idleTimeout, 1e6)))
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

  // MARK: - Buffered transfers

  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    let taskBox = Lock<URLSessionDataTask?>(nil)
    let url = request.url
    let urlRequest = Self.urlRequest(for: request, idleTimeout: timeout)
    return try await waitForTransfer { continuation in
      let task = session.dataTask(with: urlRequest)
      let id = task.taskIdentifier
      transfers.withLock {
        $0[id] = Transfer(sink: .buffer(continuation), limit: limit, url: url)
      }
      taskBox.withLock { $0 = task }
      // A timer, not a wait: nothing blocks while it is pending.
      DispatchQueue.global().asyncAfter(deadline: .now() + min(timeout, 1e9)) {
        [weak self, weak task] in
        self?.finish(
          id, .failure(HTTPError.timedOut(url: HTTPError.redacted(url), after: timeout)))
        task?.cancel()
      }
      task.resume()
      if Task.isCancelled {
        finish(id, .failure(CancellationError()))
        task.cancel()
      }
    } onCancel: {
      if let task = taskBox.withLock({ $0 }) {
        finish(task.taskIdentifier, .failure(CancellationError()))
        task.cancel()
      }
    }
  }

  // MARK: - Streaming transfers

  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double, highWater: Int
  ) async throws(HTTPError) -> StreamedResponse {
    let task = session.dataTask(with: Self.urlRequest(for: request, idleTimeout: idleTimeout))
    let id = task.taskIdentifier
    let url = HTTPError.redacted(request.url)
    let head = Lock<CheckedContinuation<(Int, [String: String]), any Error>?>(nil)
    let body = StreamBody(
      highWater: highWater, resume: { [weak task] in task?.resume() },
      cancel: { [weak self, weak task] in
        _ = self?.transfers.withLock { $0.removeValue(forKey: id) }
        if let task { Self.cancelLater(task) }
      })
    let handler: @Sendable (StreamEvent) -> Void = { [weak task] event in
      switch event {
      case .head(let status, let headers):
        head.withLock { $0.take() }?.resume(returning: (status, headers))
      case .chunk(let data):
        // Backpressure: a suspended task stops reading its socket until the consumer catches
        // up (then `resume`).
        if body.append(data) { task?.suspend() }
      case .end(let error):
        head.withLock { $0.take() }?.resume(throwing: error ?? HTTPError.cancelled)
        body.finish(error)
      }
    }
    transfers.withLock {
      $0[id] = Transfer(sink: .stream(handler), limit: Int.max, url: request.url)
    }
    let (status, headers) = try await waitForTransfer { continuation in
      head.withLock { $0 = continuation }
      task.resume()
      DispatchQueue.global().asyncAfter(deadline: .now() + min(headTimeout, 1e9)) {
        guard let waiting = head.withLock({ $0.take() }) else { return }
        waiting.resume(throwing: HTTPError.timedOut(url: url, after: headTimeout))
        body.consumerGone()
      }
    } onCancel: {
      head.withLock { $0.take() }?.resume(throwing: HTTPError.cancelled)
      body.consumerGone()
    }
    return StreamedResponse(status: status, headers: headers, body: body)
  }

  // MARK: - Ending a transfer

  private func finish(_ id: Int, _ result: Result<RawHTTPResponse, any Error>) {
    guard let transfer = transfers.withLock({ $0.removeValue(forKey: id) }) else { return }
    switch transfer.sink {
    case .buffer(let continuation):
      continuation.resume(with: result)
    case .stream(let handler):
      switch result {
      case .success: handler(.end(nil))
      case .failure(let error as HTTPError): handler(.end(error))
      case .failure: handler(.end(.cancelled))
      }
    }
  }

  // MARK: - URLSessionDataDelegate

  func urlSession(
    _ session: URLSession, task: URLSessionTask,
    willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
    completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    // The executor follows redirects, by the same rules for every transport: the 3xx is the
    // answer.
    completionHandler(nil)
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    let id = dataTask.taskIdentifier
    let http = response as? HTTPURLResponse
    let (transfer, tooLarge) = transfers.withLock { transfers -> (Transfer?, Bool) in
      guard transfers[id] != nil else { return (nil, false) }
      transfers[id]!.response = http
      let transfer = transfers[id]!
      if case .buffer = transfer.sink, response.expectedContentLength > Int64(transfer.limit) {
        return (transfer, true)
      }
      return (transfer, false)
    }
    guard let transfer else {
      completionHandler(.cancel)
      return
    }
    if tooLarge {
      finish(
        id,
        .failure(HTTPError.tooLarge(url: HTTPError.redacted(transfer.url), limit: transfer.limit)))
      completionHandler(.cancel)
      Self.cancelLater(dataTask)
      return
    }
    if case .stream(let handler) = transfer.sink, let http {
      handler(.head(status: http.statusCode, headers: Self.headers(of: http)))
    }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let id = dataTask.taskIdentifier
    enum Step {
      case none
      case overLimit(Transfer)
      case chunk(@Sendable (StreamEvent) -> Void)
    }
    let step = transfers.withLock { transfers -> Step in
      guard var transfer = transfers[id] else { return .none }
      transfer.received += data.count
      switch transfer.sink {
      case .buffer:
        if transfer.received > transfer.limit {
          transfers.removeValue(forKey: id)
          return .overLimit(transfer)
        }
        transfers[id] = nil  // keep the body uniquely referenced while appending
        transfer.body.append(data)
        transfers[id] = transfer
        return .none
      case .stream(let handler):
        transfers[id] = transfer
        return .chunk(handler)
      }
    }
    switch step {
    case .none:
      break
    case .overLimit(let transfer):
      Self.cancelLater(dataTask)
      if case .buffer(let continuation) = transfer.sink {
        continuation.resume(
          throwing: HTTPError.tooLarge(url: HTTPError.redacted(transfer.url), limit: transfer.limit)
        )
      }
    case .chunk(let handler):
      handler(.chunk(data))
    }
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
  ) {
    guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) })
    else { return }
    let url = HTTPError.redacted(transfer.url)
    let expected = transfer.response.flatMap {
      $0.expectedContentLength >= 0 ? Int($0.expectedContentLength) : nil
    }
    let outcome: Result<RawHTTPResponse, HTTPError>
    if let error {
      let code = (error as? URLError)?.code
      if code == .timedOut {
        outcome = .failure(.timedOut(url: url, after: task.originalRequest?.timeoutInterval ?? 0))
      } else if code == .cancelled {
        outcome = .failure(.cancelled)
      } else if transfer.response != nil, code != .cannotConnectToHost {
        // The headers arrived, then the connection broke: the body is cut off.
        outcome = .failure(.truncated(url: url, expected: expected, received: transfer.received))
      } else {
        outcome = .failure(.unreachable(url: url, reason: Self.reason(error)))
      }
    } else if let response = transfer.response {
      if let expected, transfer.received < expected {
        outcome = .failure(.truncated(url: url, expected: expected, received: transfer.received))
      } else {
        outcome = .success(
          RawHTTPResponse(
            status: response.statusCode, headers: Self.headers(of: response), body: transfer.body))
      }
    } else {
      outcome = .failure(.unreachable(url: url, reason: "no response"))
    }
    switch transfer.sink {
    case .buffer(let continuation):
      continuation.resume(with: outcome.mapError { $0 as any Error })
    case .stream(let handler):
      if case .failure(let error) = outcome {
        handler(.end(error))
      } else {
        handler(.end(nil))
      }
    }
  }

  // MARK: - Helpers

  /// Cancels `task` from outside the delegate callback: the callbacks run inline on
  /// URLSession's work queue (see `InlineOperationQueue`), and `cancel()` waits for that queue.
  private static func cancelLater(_ task: URLSessionTask) {
    DispatchQueue.global().async { task.cancel() }
  }

  static func headers(of response: HTTPURLResponse) -> [String: String] {
    var headers: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      if let name = name as? String, let value = value as? String {
        headers[name.lowercased()] = value
      }
    }
    return headers
  }

  private static func reason(_ error: any Error) -> String {
    guard let error = error as? URLError else { return "\(type(of: error))" }
    switch error.code {
    case .cannotConnectToHost: return "connection refused"
    case .cannotFindHost, .dnsLookupFailed: return "host not found"
    case .networkConnectionLost: return "the connection was lost"
    case .notConnectedToInternet: return "not connected"
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
      .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
      return "TLS failed"
    default: return "URL error \(error.code.rawValue)"
    }
  }
}

/// The delegate queue of the transport's session: it runs each delegate callback at once, on
/// the thread that enqueues it.
///
/// On Linux, URLSession (libcurl) hands each received chunk to the delegate by enqueueing an
/// operation and reads on without waiting. With an ordinary queue, a fast or compressed body
/// piles up in the queue faster than the delegate drains it — a 1 MB gzip bomb reached 1.17 GB
/// before the size limit could cancel the transfer (issue #9, item 4). Run inline, every
/// chunk is counted (and, past the limit, dropped) the moment curl produces it, so memory
/// stays within a small multiple of the limit. The callbacks only take a short lock; the
/// work a caller does with the body happens elsewhere.
final class InlineOperationQueue: OperationQueue, @unchecked Sendable {
  // @unchecked Sendable: it stores nothing; OperationQueue itself is thread-safe.
  override func addOperation(_ block: @escaping @Sendable () -> Void) {
    block()
  }

  override func addOperation(_ operation: Operation) {
    operation.start()
  }
}
#endif
