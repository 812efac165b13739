import Testing

@testable import TetherHTTP

/// The pool's state machine, event by event, without sockets or clocks.
@Suite struct ConnectionPoolStateMachineTests {
  typealias Machine = ConnectionPoolStateMachine
  let refused = HTTPError.unreachable(url: "http://h", reason: "connection refused")

  @Test func aRequestOpensAConnectionAndRunsOnItOnceItIsUp() {
    var pool = Machine(maximumConnections: 8)
    #expect(pool.requestQueued(1, idempotent: true) == [.connect(0)])
    #expect(pool.connectionEstablished(0) == [.execute(1, on: 0)])
    #expect(pool.exchangeFinished(0, reusable: true) == [.startIdleTimer(0)])
    #expect(pool.idleCount == 1)
    // The idle connection is reused: no new connection.
    #expect(pool.requestQueued(2, idempotent: true) == [.cancelIdleTimer(0), .execute(2, on: 0)])
  }

  @Test func theCapHoldsAndWaitersAreServedOldestFirst() {
    var pool = Machine(maximumConnections: 2)
    #expect(pool.requestQueued(1, idempotent: true) == [.connect(0)])
    #expect(pool.requestQueued(2, idempotent: true) == [.connect(1)])
    #expect(pool.requestQueued(3, idempotent: true) == [])
    #expect(pool.requestQueued(4, idempotent: true) == [])
    #expect(pool.connectionCount == 2 && pool.waitingCount == 4)
    // Whichever connection comes up first takes the oldest waiter.
    #expect(pool.connectionEstablished(1) == [.execute(1, on: 1)])
    #expect(pool.connectionEstablished(0) == [.execute(2, on: 0)])
    #expect(pool.exchangeFinished(0, reusable: true) == [.execute(3, on: 0)])
    #expect(pool.exchangeFinished(1, reusable: true) == [.execute(4, on: 1)])
    #expect(pool.exchangeFinished(0, reusable: true) == [.startIdleTimer(0)])
  }

  @Test func aConnectionThatCannotBeReusedIsReplacedForTheNextWaiter() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: true)
    _ = pool.connectionEstablished(0)
    #expect(pool.exchangeFinished(0, reusable: false) == [.close(0), .connect(1)])
    #expect(pool.connectionEstablished(1) == [.execute(2, on: 1)])
  }

  @Test func aFailedConnectBacksOffAndConnectsAgainWhileRequestsWait() {
    var pool = Machine(maximumConnections: 1, maximumConnectRetries: 3)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: true)
    // No waiter fails: the slot waits its back-off (it still counts against the cap), then
    // connects again, its failures counted.
    #expect(pool.connectionFailed(0, refused) == [.startBackoffTimer(0, failures: 1)])
    #expect(pool.connectionCount == 1 && pool.waitingCount == 2)
    #expect(pool.requestQueued(3, idempotent: true) == [])
    #expect(pool.backoffElapsed(0) == [.connect(1)])
    #expect(pool.connectionFailed(1, refused) == [.startBackoffTimer(1, failures: 2)])
    #expect(pool.backoffElapsed(1) == [.connect(2)])
    // The server is back: the waiters run, oldest first.
    #expect(pool.connectionEstablished(2) == [.execute(1, on: 2)])
    #expect(pool.exchangeFinished(2, reusable: true) == [.execute(2, on: 2)])
  }

  @Test func whenTheRetriesRunOutEveryWaiterFailsWithTheConnectError() {
    var pool = Machine(maximumConnections: 2, maximumConnectRetries: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: false)
    #expect(pool.connectionFailed(0, refused) == [.startBackoffTimer(0, failures: 1)])
    #expect(pool.backoffElapsed(0) == [.connect(2)])
    #expect(pool.connectionFailed(2, refused) == [.fail(1, refused), .fail(2, refused)])
    // The other slot, connecting for a waiter that is gone, parks idle if it comes up.
    #expect(pool.connectionEstablished(1) == [.startIdleTimer(1)])
  }

  @Test func aRefusalThatWouldRepeatIsNeverRetried() {
    var pool = Machine(maximumConnections: 1, maximumConnectRetries: 3)
    let refusal = HTTPError.unreachable(url: "https://h", reason: "certificate expired")
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: true)
    #expect(
      pool.connectionFailed(0, refusal, retryable: false) == [
        .fail(1, refusal), .fail(2, refusal),
      ])
    #expect(pool.isEmpty)
  }

  @Test func aWaiterWhoseDeadlinePassesWhileConnectsFailGetsTheConnectError() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionFailed(0, refused)
    let timeout = HTTPError.timedOut(url: "http://h/a", after: 1)
    #expect(pool.requestAbandoned(1, timeout) == [.fail(1, refused)])
    // Its back-off ends with no one waiting: nothing connects.
    #expect(pool.backoffElapsed(0) == [])
    #expect(pool.isEmpty)
    // Once a connection comes up, a timeout is a timeout again.
    _ = pool.requestQueued(2, idempotent: true)
    _ = pool.connectionEstablished(1)
    _ = pool.requestQueued(3, idempotent: true)
    #expect(pool.requestAbandoned(3, timeout) == [.fail(3, timeout)])
  }

  @Test func aSlotBackingOffIsForgottenAtShutDown() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionFailed(0, refused)
    #expect(pool.shutDown() == [.fail(1, .cancelled)])
    #expect(pool.isEmpty && pool.connectionCount == 0)
    #expect(pool.backoffElapsed(0) == [])
  }

  @Test func aDeadKeptAliveConnectionResendsAnIdempotentRequestOnce() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionEstablished(0)
    _ = pool.exchangeFinished(0, reusable: true)
    _ = pool.requestQueued(2, idempotent: true)
    let dead = HTTPError.truncated(url: "u", expected: nil, received: 0)
    // Sent again on a new connection, at the front of the queue.
    #expect(pool.exchangeFailed(0, dead, reusedAndSilent: true) == [.connect(1)])
    #expect(pool.connectionEstablished(1) == [.execute(2, on: 1)])
    // Once only: the second silent death fails it.
    #expect(pool.exchangeFailed(1, dead, reusedAndSilent: true) == [.fail(2, dead)])
  }

  @Test func aDeadKeptAliveConnectionNeverResendsAPost() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionEstablished(0)
    _ = pool.exchangeFinished(0, reusable: true)
    _ = pool.requestQueued(2, idempotent: false)
    let dead = HTTPError.truncated(url: "u", expected: nil, received: 0)
    #expect(pool.exchangeFailed(0, dead, reusedAndSilent: true) == [.fail(2, dead)])
  }

  @Test func aConnectionFoundUnusableBeforeSendingRequeuesEvenAPost() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionEstablished(0)
    _ = pool.exchangeFinished(0, reusable: true)
    #expect(pool.requestQueued(2, idempotent: false) == [.cancelIdleTimer(0), .execute(2, on: 0)])
    // Nothing was sent: the POST waits for the next connection, first in line.
    _ = pool.requestQueued(3, idempotent: true)
    #expect(pool.exchangeNotStarted(0) == [.connect(1)])
    #expect(pool.connectionEstablished(1) == [.execute(2, on: 1)])
  }

  @Test func abandoningAWaiterFailsItAndAbandoningARunningOneAbortsItsExchange() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: true)
    let late = HTTPError.timedOut(url: "u", after: 1)
    #expect(pool.requestAbandoned(2, late) == [.fail(2, late)])
    _ = pool.connectionEstablished(0)
    #expect(pool.requestAbandoned(1, .cancelled) == [.abortExchange(0, .cancelled)])
    #expect(pool.exchangeFailed(0, .cancelled, reusedAndSilent: false) == [.fail(1, .cancelled)])
    #expect(pool.requestAbandoned(1, .cancelled) == [])
    #expect(pool.isEmpty)
  }

  @Test func idleConnectionsCloseOnTheirTimerOrWhenTheServerClosesThem() {
    var pool = Machine(maximumConnections: 2)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.requestQueued(2, idempotent: true)
    _ = pool.connectionEstablished(0)
    _ = pool.connectionEstablished(1)
    _ = pool.exchangeFinished(0, reusable: true)
    _ = pool.exchangeFinished(1, reusable: true)
    #expect(pool.idleTimeoutFired(0) == [.close(0)])
    #expect(pool.connectionClosed(1) == [.cancelIdleTimer(1)])
    #expect(pool.isEmpty)
    // A late timer for a connection already gone does nothing.
    #expect(pool.idleTimeoutFired(0) == [])
  }

  @Test func shuttingDownFailsWaitersAndClosesIdleConnections() {
    var pool = Machine(maximumConnections: 1)
    _ = pool.requestQueued(1, idempotent: true)
    _ = pool.connectionEstablished(0)
    _ = pool.exchangeFinished(0, reusable: true)
    _ = pool.requestQueued(2, idempotent: true)
    _ = pool.requestQueued(3, idempotent: true)
    #expect(pool.shutDown() == [.fail(3, .cancelled)])
    // The busy connection closes when its exchange ends; nothing new starts.
    #expect(pool.exchangeFinished(0, reusable: true) == [.close(0)])
    #expect(pool.requestQueued(4, idempotent: true) == [.fail(4, .cancelled)])
  }

  /// Random event sequences: never more connections than the cap, and every request answered
  /// exactly once (executed then finished or failed, or failed while waiting).
  @Test(arguments: 0..<40)
  func randomEventSequencesKeepTheInvariants(seed: Int) {
    var random = SplitMix(seed: UInt64(seed))
    let cap = 1 + Int(random.next() % 4)
    var pool = Machine(maximumConnections: cap)
    var model = PoolModel()
    for _ in 0..<400 {
      let actions: [Machine.Action]
      switch random.next() % 11 {
      case 0, 1:
        let id = model.nextRequest
        model.nextRequest += 1
        model.open.insert(id)
        actions = pool.requestQueued(id, idempotent: random.next() % 3 != 0)
      case 2:
        guard let id = model.open.randomElement(using: &random) else { continue }
        actions = pool.requestAbandoned(id, .cancelled)
      case 3:
        guard let id = model.connecting.randomElement(using: &random) else { continue }
        actions = pool.connectionEstablished(id)
        model.connecting.remove(id)
      case 4:
        guard let id = model.connecting.randomElement(using: &random) else { continue }
        model.connecting.remove(id)
        actions = pool.connectionFailed(id, refused)
      case 5:
        guard let (connection, request) = model.busy.randomElement(using: &random) else {
          continue
        }
        model.busy[connection] = nil
        model.answer(request)
        actions = pool.exchangeFinished(connection, reusable: random.next() % 4 != 0)
      case 6:
        guard let (connection, _) = model.busy.randomElement(using: &random) else { continue }
        model.busy[connection] = nil
        actions = pool.exchangeFailed(
          connection, refused, reusedAndSilent: random.next() % 2 == 0)
      case 7:
        guard let id = model.idle.randomElement(using: &random) else { continue }
        actions = random.next() % 2 == 0 ? pool.idleTimeoutFired(id) : pool.connectionClosed(id)
      case 9:
        guard let id = model.backingOff.randomElement(using: &random) else { continue }
        model.backingOff.remove(id)
        actions = pool.backoffElapsed(id)
      case 8:
        guard let (connection, _) = model.busy.randomElement(using: &random) else { continue }
        model.busy[connection] = nil
        // A reused connection that died silently under its request.
        actions = pool.exchangeFailed(connection, refused, reusedAndSilent: true)
      default:
        guard let (connection, _) = model.busy.randomElement(using: &random) else { continue }
        model.busy[connection] = nil
        // A kept-alive connection found closed before anything was sent.
        actions = pool.exchangeNotStarted(connection)
      }
      model.apply(actions)
      #expect(pool.connectionCount <= cap, "seed \(seed): more connections than the cap")
      #expect(model.answeredTwice.isEmpty, "seed \(seed): answered twice \(model.answeredTwice)")
      #expect(
        pool.connectionCount
          == model.connecting.count + model.busy.count + model.idle.count
          + model.backingOff.count)
    }
    // Drain: bring every connection up and every exchange to its end.
    var rounds = 0
    while !model.open.isEmpty, rounds < 10_000 {
      rounds += 1
      if let id = model.connecting.first {
        model.connecting.remove(id)
        model.apply(pool.connectionEstablished(id))
      } else if let (connection, request) = model.busy.first {
        model.busy[connection] = nil
        model.answer(request)
        model.apply(pool.exchangeFinished(connection, reusable: true))
      } else if let id = model.backingOff.first {
        model.backingOff.remove(id)
        model.apply(pool.backoffElapsed(id))
      } else {
        break
      }
    }
    #expect(model.open.isEmpty, "seed \(seed): requests never answered: \(model.open)")
    #expect(model.answeredTwice.isEmpty)
  }
}

/// What the driver would see, to check the machine's actions against.
private struct PoolModel {
  var nextRequest = 0
  /// Requests not yet answered.
  var open: Set<Int> = []
  var answered: Set<Int> = []
  var answeredTwice: [Int] = []
  var connecting: Set<Int> = []
  var busy: [Int: Int] = [:]
  var idle: Set<Int> = []
  var backingOff: Set<Int> = []

  mutating func apply(_ actions: [ConnectionPoolStateMachine.Action]) {
    for action in actions {
      switch action {
      case .connect(let id):
        connecting.insert(id)
      case .execute(let request, let connection):
        idle.remove(connection)
        busy[connection] = request
      case .fail(let request, _):
        answer(request)
      case .abortExchange:
        break
      case .close(let connection):
        idle.remove(connection)
      case .startIdleTimer(let connection):
        idle.insert(connection)
      case .cancelIdleTimer(let connection):
        idle.remove(connection)
      case .startBackoffTimer(let connection, _):
        backingOff.insert(connection)
      }
    }
  }

  mutating func answer(_ request: Int) {
    if !answered.insert(request).inserted { answeredTwice.append(request) }
    open.remove(request)
  }
}

/// A seeded generator, so a failing sequence can be replayed.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
