import Dispatch
import Foundation
import Synchronization

import Tether

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one place Tether talks to URLSession. Every request any module makes goes through it,
/// so the hardening rules hold once for all of them:
///
/// - bodies arrive chunk by chunk through `URLSessionDataDelegate`, and a transfer stops as
///   soon as it passes its size limit (the bytes counted are the decoded ones, so a gzip bomb
///   stops at the limit too);
/// - our own deadline per transfer (URLSession's timeout is an idle timeout that a slow trickle
///   of bytes resets);
/// - redirects: at most `maximumRedirects`, never from `https` to `http`, and credentials are
///   stripped whenever the target's origin (scheme, host, port) differs from the original one;
/// - streaming transfers (server-sent events, watches) hand each chunk to a handler as it
///   arrives.
final class HTTPTransport: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // Sendable: all mutable state is in `transfers`, a `Lock`; `session` is set once in `init`.

  /// How one transfer hands its outcome back.
  enum Sink {
    /// Collect the body and resume once with the whole response.
    case buffer(CheckedContinuation<RawHTTPResponse, any Error>)
    /// Hand the head, then each chunk, then the end to `handler` as they arrive.
    case stream(@Sendable (StreamEvent) -> Void)
  }

  /// What a streaming transfer reports, in order: `head` once, `chunk`s, then `end`.
  enum StreamEvent: Sendable {
    case head(status: Int, headers: [String: String])
    case chunk(Data)
    case end(HTTPError?)
  }

  private struct Transfer {
    let sink: Sink
    let limit: Int
    let url: URL
    let sensitiveHeaders: Set<String>
    let maximumRedirects: Int
    var response: HTTPURLResponse?
    var body = Data()
    var received = 0
    var redirects = 0
  }

  private let transfers = Lock<[Int: Transfer]>([:])
  private(set) var session: URLSession!
  /// The transport of plain `http` requests when the client asked for sockets (see
  /// `SocketTransport`); `nil`: URLSession carries everything.
  private let sockets: SocketTransport?

  /// Whether the environment names a proxy for plain `http` (URLSession, through libcurl,
  /// honours `http_proxy` and `all_proxy`; the socket transport does not speak to proxies).
  static let proxyConfigured: Bool = {
    let environment = ProcessInfo.processInfo.environment
    return ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"].contains {
      !(environment[$0] ?? "").isEmpty
    }
  }()

  /// Headers that are never sent to another origin, whatever the caller marks.
  static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

  /// Creates a transport.
  ///
  /// - Parameter plainHTTPOverSockets: Whether `http` requests bypass URLSession for
  ///   `SocketTransport` (redirects followed by the same rules, nothing decompressed, no
  ///   proxy; nothing a server sends can end the process). Ignored when a proxy is set in the
  ///   environment (`http_proxy`, `all_proxy`): URLSession honours it. `https` always uses
  ///   URLSession.
  init(plainHTTPOverSockets: Bool = false) {
    sockets = plainHTTPOverSockets && !Self.proxyConfigured ? SocketTransport() : nil
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
  func invalidate() {
    session.invalidateAndCancel()
    sockets?.invalidate()
  }

  // MARK: - Buffered transfers

  /// Performs `request` and returns the whole response, whatever its status.
  ///
  /// - Throws: `HTTPError` (unreachable, timed out, too large, truncated, redirect refused) or
  ///   `CancellationError` when the task is cancelled.
  func perform(
    _ request: URLRequest, limit: Int, timeout: Double, sensitiveHeaders: Set<String>,
    maximumRedirects: Int
  ) async throws -> RawHTTPResponse {
    if let sockets, request.url?.scheme?.lowercased() == "http" {
      return try await performOverSockets(
        request, sockets: sockets, limit: limit, timeout: timeout,
        sensitiveHeaders: sensitiveHeaders, maximumRedirects: maximumRedirects)
    }
    let taskBox = Lock<URLSessionDataTask?>(nil)
    let url = request.url!
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        transfers.withLock {
          $0[id] = Transfer(
            sink: .buffer(continuation), limit: limit, url: url,
            sensitiveHeaders: sensitiveHeaders, maximumRedirects: maximumRedirects)
        }
        taskBox.withLock { $0 = task }
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
      }
    } onCancel: {
      if let task = taskBox.withLock({ $0 }) {
        finish(task.taskIdentifier, .failure(CancellationError()))
        task.cancel()
      }
    }
  }

  /// `perform` for a plain `http` request: the socket transport, with the redirect rules
  /// applied here (URLSession applies them through its delegate). A redirect to `https`
  /// continues on URLSession. One deadline covers the whole chain.
  private func performOverSockets(
    _ request: URLRequest, sockets: SocketTransport, limit: Int, timeout: Double,
    sensitiveHeaders: Set<String>, maximumRedirects: Int
  ) async throws -> RawHTTPResponse {
    let original = request.url!
    let started = ContinuousClock.now
    var current = request
    var redirects = 0
    while true {
      let elapsed = (ContinuousClock.now - started).seconds
      let response = try await sockets.perform(
        current, limit: limit, timeout: max(0.001, timeout - elapsed))
      guard [301, 302, 303, 307, 308].contains(response.status),
        let location = response.headers["location"]
      else { return response }
      redirects += 1
      let target = URL(string: location, relativeTo: current.url)?.absoluteURL
      let headerNames = Array((current.allHTTPHeaderFields ?? [:]).keys)
      switch RedirectRule.decide(
        original: original, previous: current.url!, target: target, redirects: redirects,
        maximumRedirects: maximumRedirects, headerNames: headerNames,
        sensitiveHeaders: sensitiveHeaders)
      {
      case .refuse(let error):
        throw error
      case .follow(let stripped):
        var next = current
        next.url = target
        for name in stripped { next.setValue(nil, forHTTPHeaderField: name) }
        // As browsers and URLSession do: 303, and 301/302 after a POST, continue with a GET.
        if response.status == 303 || (response.status <= 302 && current.httpMethod == "POST") {
          next.httpMethod = "GET"
          next.httpBody = nil
          next.setValue(nil, forHTTPHeaderField: "Content-Type")
        }
        guard next.url?.scheme?.lowercased() == "http" else {
          return try await perform(
            next, limit: limit,
            timeout: max(0.001, timeout - (ContinuousClock.now - started).seconds),
            sensitiveHeaders: sensitiveHeaders,
            maximumRedirects: max(0, maximumRedirects - redirects))
        }
        current = next
      }
    }
  }

  // MARK: - Streaming transfers

  /// Starts `request` as a stream: `handler` receives the head, each chunk as it arrives, and
  /// the end (with an error unless the server ended the body properly). `limit` bounds one
  /// chunk's size, not the stream's.
  ///
  /// - Returns: A closure that cancels the transfer; `handler` then gets no further events.
  func stream(
    _ request: URLRequest, limit: Int, sensitiveHeaders: Set<String>, maximumRedirects: Int,
    handler: @escaping @Sendable (StreamEvent) -> Void
  ) -> @Sendable () -> Void {
    if let sockets, request.url?.scheme?.lowercased() == "http" {
      return sockets.stream(request, limit: limit, handler: handler)
    }
    let task = session.dataTask(with: request)
    let id = task.taskIdentifier
    transfers.withLock {
      $0[id] = Transfer(
        sink: .stream(handler), limit: limit, url: request.url!,
        sensitiveHeaders: sensitiveHeaders, maximumRedirects: maximumRedirects)
    }
    task.resume()
    // The closure may run inside a delegate callback (a stream consumer that stops on an
    // event), where a synchronous cancel would wait for the queue it runs on.
    return { [weak self, weak task] in
      _ = self?.transfers.withLock { $0.removeValue(forKey: id) }
      if let task { Self.cancelLater(task) }
    }
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
    let id = task.taskIdentifier
    let decision = transfers.withLock { transfers -> Result<URLRequest, HTTPError>? in
      guard var transfer = transfers[id] else { return nil }
      transfer.redirects += 1
      transfers[id] = transfer
      let headers = Array((request.allHTTPHeaderFields ?? [:]).keys)
      switch RedirectRule.decide(
        original: transfer.url, previous: response.url ?? transfer.url, target: request.url,
        redirects: transfer.redirects, maximumRedirects: transfer.maximumRedirects,
        headerNames: headers, sensitiveHeaders: transfer.sensitiveHeaders)
      {
      case .refuse(let error):
        return .failure(error)
      case .follow(let stripped):
        var next = request
        for name in stripped { next.setValue(nil, forHTTPHeaderField: name) }
        return .success(next)
      }
    }
    switch decision {
    case .success(let next)?:
      completionHandler(next)
    case .failure(let error)?:
      finish(id, .failure(error))
      completionHandler(nil)
      Self.cancelLater(task)
    case nil:
      completionHandler(nil)
    }
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

/// A response as it came off the wire: status, headers (lower-cased names) and body.
struct RawHTTPResponse: Sendable {
  var status: Int
  var headers: [String: String]
  var body: Data
}

/// What to do with one redirect: the transport's redirect rules as a pure function.
enum RedirectRule {
  enum Decision: Equatable {
    /// Follow it without the named headers.
    case follow(stripping: [String])
    /// Do not follow it; the request fails with this error.
    case refuse(HTTPError)
  }

  /// At most `maximumRedirects`; never from `https` to anything else; only to http(s); the
  /// credentials (`Authorization`, `Cookie`, `Proxy-Authorization` and `sensitiveHeaders`,
  /// lower-cased) are stripped when the target's origin differs from the original request's.
  static func decide(
    original: URL, previous: URL, target: URL?, redirects: Int, maximumRedirects: Int,
    headerNames: [String], sensitiveHeaders: Set<String>
  ) -> Decision {
    let from = HTTPError.redacted(original)
    guard let target else {
      return .refuse(.redirectRefused(url: from, reason: "the redirect has no target"))
    }
    if redirects > maximumRedirects {
      return .refuse(.redirectRefused(url: from, reason: "more than \(maximumRedirects) redirects"))
    }
    let scheme = target.scheme?.lowercased() ?? ""
    if previous.scheme?.lowercased() == "https" || original.scheme?.lowercased() == "https",
      scheme != "https"
    {
      return .refuse(
        .redirectRefused(
          url: from,
          reason: "a redirect from https to \(scheme.isEmpty ? "?" : scheme) is never followed"
        ))
    }
    guard scheme == "http" || scheme == "https" else {
      return .refuse(.redirectRefused(url: from, reason: "the redirect is not to http(s)"))
    }
    guard Origin(original) != Origin(target) else { return .follow(stripping: []) }
    let credentials = HTTPTransport.credentialHeaders.union(sensitiveHeaders)
    return .follow(stripping: headerNames.filter { credentials.contains($0.lowercased()) }.sorted())
  }
}

/// An origin in the sense of RFC 6454: scheme, host and port (the scheme's default filled in).
struct Origin: Equatable {
  let scheme: String
  let host: String
  let port: Int?

  init(_ url: URL) {
    scheme = url.scheme?.lowercased() ?? ""
    host = url.host?.lowercased() ?? ""
    port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
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
