/// Connecting to a host's addresses as a pure state machine, after Happy Eyeballs (RFC 8305):
/// events in (the resolver's answer, an attempt connected or failed, a timer fired), actions
/// out (resolve, start an attempt, start or cancel a timer, close an attempt, succeed, fail),
/// no I/O and no clock. ``TCPConnector`` performs the actions on an ``EventLoop``.
///
/// What it keeps true:
/// - addresses are tried with the two families interleaved, starting with the resolver's first
///   (RFC 8305 §4: IPv6 first where the system prefers it, then IPv4, then IPv6…);
/// - a new attempt starts `attemptDelay` (250 ms, §5) after the previous one started, or at
///   once when every attempt in flight failed, while earlier attempts go on;
/// - the first attempt to connect wins, and every other one is closed;
/// - an attempt that is not the last address has its own timeout (its share of the connect
///   timeout), so a black-holed address ends before the connect timeout; the last address
///   runs until the owner's overall timeout, which ends the machine with ``cancel()``;
/// - it ends exactly once, with `succeed` or `fail`, unless cancelled first.
struct HappyEyeballsStateMachine {
  typealias AttemptID = Int

  /// A timer the driver runs for the machine; reported back with ``timerFired(_:)``.
  enum Timer: Hashable {
    /// The connection attempt delay: the next address starts when it fires.
    case nextAttempt
    /// An attempt's own timeout.
    case attemptTimeout(AttemptID)
  }

  /// Why connecting failed.
  enum Failure: Equatable, Error {
    /// The name has no address.
    case hostNotFound
    /// Every address was tried; the reason is the last attempt's ("connection refused").
    case unreachable(String)
  }

  /// What the driver must do.
  enum Action: Equatable {
    /// Resolve the host; report ``resolved(_:)``.
    case resolve
    /// Open a socket and connect it to the address; report ``attemptConnected(_:)`` or
    /// ``attemptFailed(_:reason:)``.
    case startAttempt(AttemptID, SocketAddress)
    /// Start (or restart) the timer; report ``timerFired(_:)``.
    case startTimer(Timer, after: Duration)
    /// Stop the timer.
    case cancelTimer(Timer)
    /// Close the attempt's socket; the machine has forgotten it.
    case closeAttempt(AttemptID)
    /// The attempt connected: its socket is the connection's.
    case succeed(AttemptID)
    /// Nothing connected.
    case fail(Failure)
  }

  private enum State {
    case new
    case resolving
    case connecting
    case finished
  }

  /// RFC 8305's recommended connection attempt delay.
  static let defaultAttemptDelay = Duration.milliseconds(250)

  let connectTimeout: Duration
  let attemptDelay: Duration
  private var state = State.new
  /// Addresses not tried yet, in the order they will be.
  private var remaining: [SocketAddress] = []
  private var addressCount = 0
  private var inFlight: [AttemptID] = []
  /// Attempts with a timeout of their own running.
  private var timed: Set<AttemptID> = []
  private var delayRunning = false
  private var nextID: AttemptID = 0
  private var lastFailure = "connection refused"

  init(connectTimeout: Duration, attemptDelay: Duration = Self.defaultAttemptDelay) {
    self.connectTimeout = connectTimeout
    self.attemptDelay = attemptDelay
  }

  /// Whether the machine ended (succeeded, failed or cancelled).
  var isFinished: Bool { state == .finished }
  /// Attempts connecting now.
  var attemptsInFlight: Int { inFlight.count }

  /// An attempt's own timeout: its share of the connect timeout, never under one second (nor
  /// over the connect timeout).
  var attemptTimeout: Duration {
    let share = connectTimeout / max(1, addressCount)
    return min(connectTimeout, max(share, .seconds(1)))
  }

  // MARK: - Events

  /// Starts: the host is resolved first.
  mutating func start() -> [Action] {
    guard state == .new else { return [] }
    state = .resolving
    return [.resolve]
  }

  /// The resolver answered: `addresses` in its order of preference, or `nil` when the name has
  /// none.
  mutating func resolved(_ addresses: [SocketAddress]?) -> [Action] {
    guard state == .resolving else { return [] }
    guard let addresses, !addresses.isEmpty else {
      state = .finished
      return [.fail(.hostNotFound)]
    }
    state = .connecting
    remaining = Self.interleaved(addresses)
    addressCount = remaining.count
    return startNextAttempt()
  }

  /// The attempt's socket connected.
  mutating func attemptConnected(_ id: AttemptID) -> [Action] {
    guard state == .connecting, inFlight.contains(id) else { return [] }
    var actions = finish()
    actions.removeAll { $0 == .closeAttempt(id) }
    return actions + [.succeed(id)]
  }

  /// The attempt failed (`reason`: the system's words, such as "connection refused"); its
  /// socket is still open until the machine says `closeAttempt`.
  mutating func attemptFailed(_ id: AttemptID, reason: String) -> [Action] {
    guard state == .connecting, let index = inFlight.firstIndex(of: id) else { return [] }
    inFlight.remove(at: index)
    lastFailure = reason
    var actions: [Action] = [.closeAttempt(id)]
    if timed.remove(id) != nil { actions.append(.cancelTimer(.attemptTimeout(id))) }
    if !remaining.isEmpty {
      // RFC 8305 §5: a failure starts the next attempt at once.
      return actions + startNextAttempt()
    }
    guard inFlight.isEmpty else { return actions }
    state = .finished
    return actions + [.fail(.unreachable(lastFailure))]
  }

  /// A timer the machine asked for fired.
  mutating func timerFired(_ timer: Timer) -> [Action] {
    guard state == .connecting else { return [] }
    switch timer {
    case .nextAttempt:
      guard delayRunning else { return [] }
      delayRunning = false
      return startNextAttempt()
    case .attemptTimeout(let id):
      guard timed.remove(id) != nil else { return [] }
      return attemptFailed(id, reason: "connection timed out")
    }
  }

  /// The owner gave up (its timeout, or it was closed): every attempt closes, no `fail`.
  mutating func cancel() -> [Action] {
    guard state != .finished else { return [] }
    return finish()
  }

  // MARK: - Helpers

  private mutating func startNextAttempt() -> [Action] {
    guard !remaining.isEmpty else { return [] }
    let address = remaining.removeFirst()
    let id = nextID
    nextID += 1
    inFlight.append(id)
    var actions: [Action] = [.startAttempt(id, address)]
    if remaining.isEmpty {
      if delayRunning {
        delayRunning = false
        actions.append(.cancelTimer(.nextAttempt))
      }
    } else {
      timed.insert(id)
      delayRunning = true
      actions.append(.startTimer(.attemptTimeout(id), after: attemptTimeout))
      actions.append(.startTimer(.nextAttempt, after: attemptDelay))
    }
    return actions
  }

  /// Ends the machine: timers stop, attempts close.
  private mutating func finish() -> [Action] {
    state = .finished
    var actions: [Action] = []
    if delayRunning { actions.append(.cancelTimer(.nextAttempt)) }
    actions += timed.sorted().map { .cancelTimer(.attemptTimeout($0)) }
    actions += inFlight.map { .closeAttempt($0) }
    delayRunning = false
    timed = []
    inFlight = []
    remaining = []
    return actions
  }

  /// `addresses` with the two families alternating, starting with the family of the first
  /// (RFC 8305 §4), each family keeping the resolver's order.
  static func interleaved(_ addresses: [SocketAddress]) -> [SocketAddress] {
    guard let first = addresses.first else { return [] }
    let preferred = addresses.filter { $0.isIPv6 == first.isIPv6 }
    let other = addresses.filter { $0.isIPv6 != first.isIPv6 }
    var result: [SocketAddress] = []
    result.reserveCapacity(addresses.count)
    for index in 0..<max(preferred.count, other.count) {
      if index < preferred.count { result.append(preferred[index]) }
      if index < other.count { result.append(other[index]) }
    }
    return result
  }
}
