import Foundation
import Synchronization
import TetherSupport

/// The connections to one origin and the requests waiting for them: the small, dumb driver of
/// ``ConnectionPoolStateMachine``. It feeds the machine what its connections and timers
/// report and performs the actions it returns.
///
/// A pool lives on one ``EventLoop`` with all its connections, so nothing in it needs a lock:
/// requests arrive through ``enqueue(_:)`` and ``abandon(_:_:)``, which hop onto the loop.
final class ConnectionPool: HTTP1ConnectionOwner, @unchecked Sendable {
  // @unchecked Sendable: every stored property is touched only on `loop`'s thread (entry
  // points from other threads go through `loop.execute`); the `let`s are immutable.
  let loop: EventLoop
  /// How connections reach the origin (directly, through a proxy, over TLS).
  let route: ConnectionRoute
  let connectTimeout: Double
  let idleTimeout: Double
  private var machine: ConnectionPoolStateMachine
  private var connections: [Int: HTTP1Connection] = [:]
  private var idleTimers: [Int: TimerID] = [:]
  private var backoffTimers: [Int: TimerID] = [:]
  private var requests: [Int: BufferedExchange] = [:]
  /// The request each busy connection carries.
  private var busy: [Int: Int] = [:]

  init(
    loop: EventLoop, route: ConnectionRoute, maximumConnections: Int,
    connectTimeout: Double, idleTimeout: Double
  ) {
    self.loop = loop
    self.route = route
    self.connectTimeout = connectTimeout
    self.idleTimeout = idleTimeout
    machine = ConnectionPoolStateMachine(maximumConnections: maximumConnections)
  }

  /// Queues `exchange`; it is answered exactly once, through its continuation.
  func enqueue(_ exchange: BufferedExchange) {
    loop.execute { [self] in
      requests[exchange.id] = exchange
      exchange.deadlineTimer = loop.schedule(at: exchange.deadline) { [weak self] in
        self?.perform(
          self?.machine.requestAbandoned(exchange.id, exchange.timeoutError) ?? [])
      }
      perform(machine.requestQueued(exchange.id, idempotent: exchange.isIdempotent))
    }
  }

  /// Gives up on request `id` (cancelled): it fails with `error` wherever it is.
  func abandon(_ id: Int, _ error: HTTPError) {
    loop.execute { [self] in perform(machine.requestAbandoned(id, error)) }
  }

  /// Fails what waits and closes what is idle; busy connections close when they finish.
  func shutDown() {
    loop.execute { [self] in perform(machine.shutDown()) }
  }

  /// The wait before a failed connect is tried again: 50 ms, doubling, at most 1 s, with full
  /// jitter so that pools that failed together do not come back together.
  static let connectBackoff = Backoff(initial: .milliseconds(50), maximum: .seconds(1))

  // MARK: - Performing the machine's actions

  private func perform(_ actions: [ConnectionPoolStateMachine.Action]) {
    for action in actions {
      switch action {
      case .connect(let id):
        let connection = HTTP1Connection(id: id, loop: loop, route: route, owner: self)
        connections[id] = connection
        connection.connect(timeout: connectTimeout)
      case .execute(let request, let id):
        guard let exchange = requests[request], let connection = connections[id] else {
          continue
        }
        busy[id] = request
        exchange.reset()
        connection.execute(
          exchange.message, url: exchange.requestURL, isHead: exchange.isHead, sink: exchange)
      case .fail(let request, let error):
        guard let exchange = requests.removeValue(forKey: request) else { continue }
        loop.cancel(exchange.deadlineTimer)
        exchange.complete(.failure(error))
      case .abortExchange(let id, let error):
        connections[id]?.abort(error)
      case .close(let id):
        connections.removeValue(forKey: id)?.close()
      case .startIdleTimer(let id):
        loop.cancel(idleTimers[id])
        idleTimers[id] = loop.schedule(at: Monotonic.deadline(after: idleTimeout)) {
          [weak self] in
          guard let self else { return }
          self.idleTimers[id] = nil
          self.perform(self.machine.idleTimeoutFired(id))
        }
      case .cancelIdleTimer(let id):
        loop.cancel(idleTimers.removeValue(forKey: id))
      case .startBackoffTimer(let id, let failures):
        let delay = Self.connectBackoff.delay(afterFailures: failures) ?? .zero
        backoffTimers[id] = loop.schedule(at: Monotonic.deadline(after: delay.seconds)) {
          [weak self] in
          guard let self else { return }
          self.backoffTimers[id] = nil
          self.perform(self.machine.backoffElapsed(id))
        }
      }
    }
  }

  // MARK: - HTTP1ConnectionOwner

  func connectionEstablished(_ connection: HTTP1Connection) {
    perform(machine.connectionEstablished(connection.id))
  }

  func connectionFailed(_ connection: HTTP1Connection, _ error: HTTPError) {
    connections[connection.id] = nil
    // A refusal (a certificate refused, say) would repeat on every attempt: typed, never
    // retried; anything else backs off and connects again while requests wait.
    perform(machine.connectionFailed(connection.id, error, retryable: connection.refusal == nil))
  }

  func exchangeFinished(_ connection: HTTP1Connection, reusable: Bool) {
    let finished = busy.removeValue(forKey: connection.id).flatMap {
      requests.removeValue(forKey: $0)
    }
    if !reusable { connections[connection.id] = nil }
    // The next waiter goes out on the connection first: the server starts on it while this
    // answer's caller is woken.
    perform(machine.exchangeFinished(connection.id, reusable: reusable))
    if let finished {
      loop.cancel(finished.deadlineTimer)
      finished.complete(.success(finished.response))
    }
  }

  func exchangeFailed(_ connection: HTTP1Connection, _ error: HTTPError, reusedAndSilent: Bool) {
    busy[connection.id] = nil
    connections[connection.id] = nil
    perform(machine.exchangeFailed(connection.id, error, reusedAndSilent: reusedAndSilent))
  }

  func idleConnectionClosed(_ connection: HTTP1Connection) {
    connections[connection.id] = nil
    perform(machine.connectionClosed(connection.id))
  }

  func exchangeNotStarted(_ connection: HTTP1Connection) {
    busy[connection.id] = nil
    connections[connection.id] = nil
    perform(machine.exchangeNotStarted(connection.id))
  }
}

/// One buffered request in a pool: its bytes, its deadline, and the body collected within
/// the size limit. Confined to its pool's loop once enqueued.
final class BufferedExchange: ExchangeSink, @unchecked Sendable {
  // @unchecked Sendable: created on the caller's thread, then handed to the pool's loop and
  // touched only there; `continuation` is resumed exactly once (`complete`).
  private static let ids = Atomic<Int>(0)

  /// A new exchange's id: taken before the exchange exists, so that a cancellation handler
  /// can name it.
  static func nextID() -> Int { ids.wrappingAdd(1, ordering: .relaxed).oldValue }

  let id: Int
  let message: [UInt8]
  let requestURL: URL
  let isHead: Bool
  let isIdempotent: Bool
  let limit: Int
  let deadline: UInt64
  let timeout: Double
  /// Whether the caller set `Accept-Encoding` (and so decodes bodies itself).
  let acceptsEncodings: Bool
  var deadlineTimer: TimerID?
  private var continuation: CheckedContinuation<RawHTTPResponse, any Error>?
  private(set) var response = RawHTTPResponse(status: 0, headers: [:], body: Data())

  /// The request's URL as errors show it (worked out only for an error: it costs a parse).
  var url: String { HTTPError.redacted(requestURL) }
  /// The error of a request whose deadline passed.
  var timeoutError: HTTPError { .timedOut(url: url, after: timeout) }

  init(
    id: Int = BufferedExchange.nextID(), request: HTTPRequest, route: ConnectionRoute,
    limit: Int, deadline: UInt64, timeout: Double,
    continuation: CheckedContinuation<RawHTTPResponse, any Error>
  ) {
    self.id = id
    message = route.serialize(request)
    requestURL = request.url
    isHead = request.method == .head
    isIdempotent = request.method.isIdempotent
    self.limit = limit
    self.deadline = deadline
    self.timeout = timeout
    acceptsEncodings = request.header("Accept-Encoding") != nil
    self.continuation = continuation
  }

  /// Forgets a partial answer before the request is sent (again).
  func reset() {
    response = RawHTTPResponse(status: 0, headers: [:], body: Data())
  }

  func complete(_ result: Result<RawHTTPResponse, HTTPError>) {
    guard let continuation else { return }
    self.continuation = nil
    continuation.resume(with: result.mapError { $0.retargeted(to: url) as any Error })
  }

  func receiveHead(status: Int, headers: [String: String]) -> HTTPError? {
    if let error = ContentCoding.check(headers, url: url, acceptsEncodings: acceptsEncodings) {
      return error
    }
    if let length = headers["content-length"].flatMap(Int.init), length > limit {
      return .tooLarge(url: url, limit: limit)
    }
    response.status = status
    response.headers = headers
    return nil
  }

  func receiveBody(_ piece: Data) -> BodyDecision {
    guard response.body.count + piece.count <= limit else {
      return .abort(.tooLarge(url: url, limit: limit))
    }
    // Most answers arrive in one piece: take it as it is rather than copy it again.
    if response.body.isEmpty { response.body = piece } else { response.body.append(piece) }
    return .proceed
  }
}

/// The engine asks for `identity` unless the caller set `Accept-Encoding`: a body compressed
/// anyway is not what the caller can read, so it is refused, never handed over as the body.
enum ContentCoding {
  static func check(
    _ headers: [String: String], url: @autoclosure () -> String, acceptsEncodings: Bool
  ) -> HTTPError? {
    guard !acceptsEncodings, let coding = headers["content-encoding"]?.lowercased(),
      !coding.isEmpty, coding != "identity"
    else { return nil }
    return .undecodable(
      url: url(), path: "",
      reason: "the server sent a \(coding)-encoded body although only identity was accepted")
  }
}
