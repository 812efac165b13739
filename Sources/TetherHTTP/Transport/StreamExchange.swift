import Foundation

/// One streamed exchange (server-sent events, a watch, a `streamingResponse`) on a connection
/// of its own: HTTP/1.1 carries one answer at a time, and a stream's may last for hours, so
/// streams never hold a pooled connection (they would starve the pool's buffered requests).
///
/// Its timeouts always end: the connection and the response head must arrive within
/// `headTimeout`; after the head, the server may stay silent for at most `idleTimeout`
/// between bytes — except while the consumer lags and the stream is paused, which is not the
/// server's silence. The body goes through a ``StreamBody``, which pauses the socket when the
/// consumer falls behind.
///
/// Confined to its loop after ``start()``.
final class StreamExchange: HTTP1ConnectionOwner, ExchangeSink, @unchecked Sendable {
  // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; entry
  // points from other threads (`start`, `consumerResumed`, `consumerGone`) hop onto it.
  typealias Head = (status: Int, headers: [String: String])

  let loop: EventLoop
  private let route: ConnectionRoute
  private let message: [UInt8]
  private let url: String
  private let requestURL: URL
  private let isHead: Bool
  private let headTimeout: Double
  private let idleTimeout: Double
  private let acceptsEncodings: Bool
  private var connection: HTTP1Connection?
  private var headContinuation: CheckedContinuation<Head, any Error>?
  private var body: StreamBody?
  private var headTimer: TimerID?
  private var idleTimer: TimerID?
  private var lastActivity: UInt64 = 0
  private var paused = false
  private var ended = false

  init(
    loop: EventLoop, request: HTTPRequest, route: ConnectionRoute, headTimeout: Double,
    idleTimeout: Double
  ) {
    self.loop = loop
    self.route = route
    message = route.serialize(request)
    url = HTTPError.redacted(request.url)
    requestURL = request.url
    isHead = request.method == .head
    self.headTimeout = headTimeout
    self.idleTimeout = idleTimeout
    acceptsEncodings = request.header("Accept-Encoding") != nil
  }

  /// Connects, sends the request and waits for the head; the body then arrives through the
  /// returned ``StreamBody``.
  ///
  /// - Throws: ``HTTPError`` when no head arrives in time, or `.cancelled`.
  func start(highWater: Int) async throws(HTTPError) -> (Head, StreamBody) {
    let body = StreamBody(
      highWater: highWater,
      resume: { [self] in loop.execute { self.consumerResumed() } },
      cancel: { [self] in loop.execute { self.end(.cancelled) } })
    let head = try await waitForTransfer { (continuation: CheckedContinuation<Head, any Error>) in
      loop.execute { [self] in
        self.body = body
        headContinuation = continuation
        headTimer = loop.schedule(at: Monotonic.deadline(after: headTimeout)) { [weak self] in
          guard let self else { return }
          self.end(.timedOut(url: self.url, after: self.headTimeout))
        }
        let connection = HTTP1Connection(id: 0, loop: loop, route: route, owner: self)
        self.connection = connection
        connection.connect(timeout: headTimeout)
      }
    } onCancel: {
      loop.execute { [self] in end(.cancelled) }
    }
    return (head, body)
  }

  // MARK: - Ending

  /// Ends the exchange with `error` (nil: the body ended normally), once.
  private func end(_ error: HTTPError?) {
    guard !ended else { return }
    ended = true
    loop.cancel(headTimer)
    loop.cancel(idleTimer)
    headTimer = nil
    idleTimer = nil
    let connection = self.connection
    self.connection = nil
    connection?.close()
    if let waiting = headContinuation {
      headContinuation = nil
      waiting.resume(throwing: error ?? HTTPError.cancelled)
    }
    body?.finish(error)
    // The body's callbacks hold this exchange; letting go of the body breaks the cycle once
    // the consumer lets go of it too.
    body = nil
  }

  private func consumerResumed() {
    guard !ended, paused else { return }
    paused = false
    lastActivity = Monotonic.now
    armIdleTimer()
    connection?.resumeReading()
  }

  /// Checks the server's silence at its deadline; re-arms itself after activity.
  private func armIdleTimer() {
    loop.cancel(idleTimer)
    idleTimer = loop.schedule(at: lastActivity + UInt64(min(max(0, idleTimeout), 1e9) * 1e9)) {
      [weak self] in
      guard let self, !self.ended, !self.paused else { return }
      let silentFor = Monotonic.now - self.lastActivity
      if Double(silentFor) / 1e9 >= self.idleTimeout {
        self.end(.timedOut(url: self.url, after: self.idleTimeout))
      } else {
        self.armIdleTimer()
      }
    }
  }

  // MARK: - HTTP1ConnectionOwner

  func connectionEstablished(_ connection: HTTP1Connection) {
    guard !ended else { return }
    connection.execute(message, url: requestURL, isHead: isHead, sink: self)
  }

  func connectionFailed(_ connection: HTTP1Connection, _ error: HTTPError) {
    self.connection = nil
    end(error.retargeted(to: url))
  }

  func exchangeFinished(_ connection: HTTP1Connection, reusable: Bool) {
    self.connection = nil
    connection.close()
    end(nil)
  }

  func exchangeFailed(_ connection: HTTP1Connection, _ error: HTTPError, reusedAndSilent: Bool) {
    self.connection = nil
    end(error)
  }

  func idleConnectionClosed(_ connection: HTTP1Connection) {
    self.connection = nil
    end(.truncated(url: url, expected: nil, received: 0))
  }

  func exchangeNotStarted(_ connection: HTTP1Connection) {
    // A stream's connection is new: it cannot have been used before.
    self.connection = nil
    end(.unreachable(url: url, reason: "the connection closed before the request was sent"))
  }

  // MARK: - ExchangeSink

  func receiveHead(status: Int, headers: [String: String]) -> HTTPError? {
    if let error = ContentCoding.check(headers, url: url, acceptsEncodings: acceptsEncodings) {
      return error
    }
    loop.cancel(headTimer)
    headTimer = nil
    lastActivity = Monotonic.now
    armIdleTimer()
    if let waiting = headContinuation {
      headContinuation = nil
      waiting.resume(returning: (status, headers))
    }
    return nil
  }

  func receiveBody(_ piece: Data) -> BodyDecision {
    lastActivity = Monotonic.now
    guard let body, body.append(piece) else { return .proceed }
    paused = true
    loop.cancel(idleTimer)
    idleTimer = nil
    return .pause
  }

}

extension HTTPError {
  /// The error with `url` as the URL it names, for an error a connection reported about its
  /// origin (unreachable, timed out while connecting) that the caller sees about its request.
  func retargeted(to url: String) -> HTTPError {
    switch self {
    case .unreachable(_, let reason): .unreachable(url: url, reason: reason)
    case .timedOut(_, let after): .timedOut(url: url, after: after)
    default: self
    }
  }
}
