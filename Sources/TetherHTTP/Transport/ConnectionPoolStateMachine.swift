/// The connection pool of one origin as a pure state machine: events in, actions out, no I/O,
/// no clock. ``ConnectionPool`` feeds it what happened and performs what it returns, so every
/// transition is unit-tested without a socket.
///
/// What it keeps true:
/// - never more than `maximumConnections` connections (connecting, busy or idle);
/// - requests are served in the order they arrived: a connection that comes up or frees
///   takes the oldest waiter;
/// - every request is answered exactly once: handed to a connection (`execute`, after which
///   its connection reports `exchangeFinished` or `exchangeFailed`) or failed (`fail`);
/// - the newest idle connection is reused first, so the older ones reach their idle timeout;
/// - a request whose kept-alive connection turned out dead before any answer byte is sent
///   again once on a new connection, if it is idempotent (RFC 9110 §9.2.2); any other fails;
/// - a connection that could not be opened is tried again after a back-off, up to
///   `maximumConnectRetries` times, while requests wait (each within its own deadline, which
///   then fails it with the connect error); the slot it holds still counts against the cap.
///   Only then, or at once for a refusal that would repeat (a certificate refused), do the
///   waiting requests fail with the error: another attempt would fail the same way.
struct ConnectionPoolStateMachine {
  typealias ConnectionID = Int
  typealias RequestID = Int

  /// What the pool's driver must do.
  enum Action: Equatable {
    /// Open a new connection; report `connectionEstablished` or `connectionFailed`.
    case connect(ConnectionID)
    /// Send the request on the connection; report `exchangeFinished` or `exchangeFailed`.
    case execute(RequestID, on: ConnectionID)
    /// Answer the request with this error; it is no longer the pool's.
    case fail(RequestID, HTTPError)
    /// Abort the exchange running on the connection with the error (its request was
    /// cancelled or timed out); the connection then reports `exchangeFailed`.
    case abortExchange(ConnectionID, HTTPError)
    /// Close the connection; the machine has forgotten it already.
    case close(ConnectionID)
    /// Start (or restart) the connection's idle timer; report `idleTimeoutFired`.
    case startIdleTimer(ConnectionID)
    /// Stop the connection's idle timer.
    case cancelIdleTimer(ConnectionID)
    /// The connection's connect failed for the `failures`-th time in a row: wait the back-off
    /// for that many failures, then report `backoffElapsed`.
    case startBackoffTimer(ConnectionID, failures: Int)
  }

  private enum Connection: Equatable {
    /// Opening; `failures` earlier connects of this slot failed in a row.
    case connecting(failures: Int)
    /// Waiting before the slot connects again, after `failures` failed connects in a row.
    case backingOff(failures: Int)
    case busy(RequestID)
    case idle

    var isPending: Bool {
      switch self {
      case .connecting, .backingOff: true
      case .busy, .idle: false
      }
    }
  }

  private struct Waiter: Equatable {
    let id: RequestID
    let idempotent: Bool
    /// Whether it was already sent again after a dead kept-alive connection.
    var resent: Bool
  }

  let maximumConnections: Int
  /// How many times a failed connect is tried again before the waiters fail.
  let maximumConnectRetries: Int
  private var connections: [ConnectionID: Connection] = [:]
  /// Idle connections, the most recently used last.
  private var idle: [ConnectionID] = []
  /// Waiters in arrival order (a resent one goes back to the front).
  private var queue: [Waiter] = []
  /// The waiter on each busy connection.
  private var running: [RequestID: (connection: ConnectionID, waiter: Waiter)] = [:]
  private var nextConnectionID: ConnectionID = 0
  private var isShutDown = false
  /// The error of the last failed connect, until a connection comes up: what a waiter whose
  /// deadline passes while the pool backs off fails with.
  private var lastConnectError: HTTPError?

  init(maximumConnections: Int, maximumConnectRetries: Int = 3) {
    self.maximumConnections = max(1, maximumConnections)
    self.maximumConnectRetries = max(0, maximumConnectRetries)
  }

  // MARK: - What tests and invariants look at

  /// Connections open or opening, and slots backing off before they connect again.
  var connectionCount: Int { connections.count }
  /// Requests waiting for a connection.
  var waitingCount: Int { queue.count }
  /// Requests on a connection.
  var runningCount: Int { running.count }
  /// Idle connections.
  var idleCount: Int { idle.count }
  /// Whether nothing is left: no connection and no request.
  var isEmpty: Bool { connections.isEmpty && queue.isEmpty && running.isEmpty }

  // MARK: - Events

  /// A request arrived.
  mutating func requestQueued(_ id: RequestID, idempotent: Bool) -> [Action] {
    guard !isShutDown else { return [.fail(id, .cancelled)] }
    let waiter = Waiter(id: id, idempotent: idempotent, resent: false)
    if let connection = idle.popLast() {
      return [.cancelIdleTimer(connection)] + start(waiter, on: connection)
    }
    queue.append(waiter)
    return openConnectionsForWaiters()
  }

  /// The request was cancelled or its deadline passed; `error` says which. A waiter whose
  /// deadline passed while connects failed fails with the connect's error, which says more.
  mutating func requestAbandoned(_ id: RequestID, _ error: HTTPError) -> [Action] {
    if let index = queue.firstIndex(where: { $0.id == id }) {
      queue.remove(at: index)
      if case .timedOut = error, let lastConnectError { return [.fail(id, lastConnectError)] }
      return [.fail(id, error)]
    }
    if let (connection, _) = running[id] {
      return [.abortExchange(connection, error)]
    }
    return []
  }

  /// A connection is up.
  mutating func connectionEstablished(_ connection: ConnectionID) -> [Action] {
    guard case .connecting = connections[connection] else { return [] }
    lastConnectError = nil
    if isShutDown {
      connections[connection] = nil
      return [.close(connection)]
    }
    return serveOrPark(connection)
  }

  /// A connection could not be opened. While requests wait and retries are left, its slot
  /// backs off and connects again; otherwise, or when `retryable` is false (a refusal that
  /// repeats on every attempt, such as a certificate refused), every waiter fails with `error`.
  mutating func connectionFailed(
    _ connection: ConnectionID, _ error: HTTPError, retryable: Bool = true
  ) -> [Action] {
    guard case .connecting(let earlier) = connections[connection] else { return [] }
    let failures = earlier + 1
    lastConnectError = error
    if retryable, failures <= maximumConnectRetries, !queue.isEmpty, !isShutDown {
      connections[connection] = .backingOff(failures: failures)
      return [.startBackoffTimer(connection, failures: failures)]
    }
    connections[connection] = nil
    let actions = queue.map { Action.fail($0.id, error) }
    queue.removeAll()
    return actions
  }

  /// A slot's back-off is over: it connects again if requests still wait for it.
  mutating func backoffElapsed(_ connection: ConnectionID) -> [Action] {
    guard case .backingOff(let failures) = connections[connection] else { return [] }
    connections[connection] = nil
    let pending = connections.values.lazy.filter(\.isPending).count
    guard queue.count > pending, !isShutDown else { return [] }
    return [openConnection(failures: failures)]
  }

  /// The request on `connection` got its whole answer; `reusable` when the connection may
  /// carry another.
  mutating func exchangeFinished(_ connection: ConnectionID, reusable: Bool) -> [Action] {
    guard case .busy(let request) = connections[connection] else { return [] }
    running[request] = nil
    guard reusable, !isShutDown else {
      connections[connection] = nil
      return [.close(connection)] + openConnectionsForWaiters()
    }
    return serveOrPark(connection)
  }

  /// The request on `connection` failed with `error`; the connection is gone. `beforeAnyAnswer`
  /// says the connection was a reused one that ended before one byte of an answer: the
  /// request may not have reached the server.
  mutating func exchangeFailed(
    _ connection: ConnectionID, _ error: HTTPError, reusedAndSilent: Bool
  ) -> [Action] {
    guard case .busy(let request) = connections[connection],
      let (_, waiter) = running.removeValue(forKey: request)
    else { return [] }
    connections[connection] = nil
    if reusedAndSilent, waiter.idempotent, !waiter.resent, !isShutDown {
      var again = waiter
      again.resent = true
      queue.insert(again, at: 0)
      return openConnectionsForWaiters()
    }
    return [.fail(request, error)] + openConnectionsForWaiters()
  }

  /// The connection handed a request turned out to be unusable before anything was sent (the
  /// server had closed it, or sent bytes nobody asked for): the request goes back to the
  /// front of the queue as it was — it never left, so even a `POST` may go again.
  mutating func exchangeNotStarted(_ connection: ConnectionID) -> [Action] {
    guard case .busy(let request) = connections[connection],
      let (_, waiter) = running.removeValue(forKey: request)
    else { return [] }
    connections[connection] = nil
    guard !isShutDown else { return [.fail(request, .cancelled)] }
    queue.insert(waiter, at: 0)
    return openConnectionsForWaiters()
  }

  /// An idle connection was closed by its server (or failed).
  mutating func connectionClosed(_ connection: ConnectionID) -> [Action] {
    guard connections[connection] == .idle else { return [] }
    connections[connection] = nil
    idle.removeAll { $0 == connection }
    return [.cancelIdleTimer(connection)]
  }

  /// A connection's idle timer fired.
  mutating func idleTimeoutFired(_ connection: ConnectionID) -> [Action] {
    guard connections[connection] == .idle else { return [] }
    connections[connection] = nil
    idle.removeAll { $0 == connection }
    return [.close(connection)]
  }

  /// The pool's client is gone: waiters fail, idle connections close, busy ones close when
  /// their exchange ends.
  mutating func shutDown() -> [Action] {
    isShutDown = true
    var actions = queue.map { Action.fail($0.id, .cancelled) }
    queue.removeAll()
    for connection in idle {
      connections[connection] = nil
      actions.append(.cancelIdleTimer(connection))
      actions.append(.close(connection))
    }
    idle.removeAll()
    // Slots backing off have no one left to connect for; their timers find them gone.
    connections = connections.filter {
      if case .backingOff = $0.value { return false }
      return true
    }
    return actions
  }

  // MARK: - Helpers

  private mutating func start(_ waiter: Waiter, on connection: ConnectionID) -> [Action] {
    connections[connection] = .busy(waiter.id)
    running[waiter.id] = (connection, waiter)
    return [.execute(waiter.id, on: connection)]
  }

  /// Gives a free connection the oldest waiter, or parks it idle.
  private mutating func serveOrPark(_ connection: ConnectionID) -> [Action] {
    if !queue.isEmpty {
      return start(queue.removeFirst(), on: connection)
    }
    connections[connection] = .idle
    idle.append(connection)
    return [.startIdleTimer(connection)]
  }

  /// Opens connections while waiters outnumber the connections being opened (or backing off
  /// before they open again), up to the cap.
  private mutating func openConnectionsForWaiters() -> [Action] {
    var actions: [Action] = []
    var pending = connections.values.lazy.filter(\.isPending).count
    while queue.count > pending, connections.count < maximumConnections, !isShutDown {
      actions.append(openConnection(failures: 0))
      pending += 1
    }
    return actions
  }

  private mutating func openConnection(failures: Int) -> Action {
    let id = nextConnectionID
    nextConnectionID += 1
    connections[id] = .connecting(failures: failures)
    return .connect(id)
  }
}
