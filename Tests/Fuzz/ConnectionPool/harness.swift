// libFuzzer harness for `ConnectionPoolStateMachine`: each input byte is one event (request
// queued, abandoned, connection up or failed (retryable or not), a connect back-off over,
// exchange finished, failed or not started, idle timer, server close, shut down), chosen among the events that make sense in the model's current state.
// After every event (a violation traps, which libFuzzer reports as a crash):
// - the pool never holds more connections than its cap;
// - the pool's count of connections is the model's (connecting + busy + idle);
// - no request is answered twice (failed, or finished on its connection);
// and at the end, once every connection is brought up and every exchange finished, every
// request that was not abandoned has its answer.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  guard let first = bytes.first else { return 0 }
  let cap = 1 + Int(first % 4)
  var pool = ConnectionPoolStateMachine(maximumConnections: cap)
  var model = Model()
  let failure = HTTPError.unreachable(url: "http://h", reason: "refused")
  for byte in bytes.dropFirst() {
    let pick = Int(byte >> 4)
    let actions: [ConnectionPoolStateMachine.Action]
    switch byte & 0x0F {
    case 0, 1, 2:
      let id = model.nextRequest
      model.nextRequest += 1
      model.open.insert(id)
      actions = pool.requestQueued(id, idempotent: byte & 0x10 == 0)
    case 3:
      guard let id = model.open.sorted().element(pick) else { continue }
      actions = pool.requestAbandoned(id, .cancelled)
    case 4, 5:
      guard let id = model.connecting.sorted().element(pick) else { continue }
      model.connecting.remove(id)
      actions = pool.connectionEstablished(id)
    case 6:
      guard let id = model.connecting.sorted().element(pick) else { continue }
      model.connecting.remove(id)
      // The high bit: a refusal that would repeat (never retried).
      actions = pool.connectionFailed(id, failure, retryable: byte & 0x80 == 0)
    case 7, 8, 9:
      guard let connection = model.busy.keys.sorted().element(pick) else { continue }
      model.answer(model.busy.removeValue(forKey: connection)!)
      actions = pool.exchangeFinished(connection, reusable: byte & 0x10 == 0)
    case 10, 11:
      guard let connection = model.busy.keys.sorted().element(pick) else { continue }
      model.busy[connection] = nil
      actions = pool.exchangeFailed(connection, failure, reusedAndSilent: byte & 0x10 == 0)
    case 12:
      guard let id = model.idle.sorted().element(pick) else { continue }
      actions = pool.idleTimeoutFired(id)
    case 13:
      guard let id = model.idle.sorted().element(pick) else { continue }
      actions = pool.connectionClosed(id)
    case 14:
      if byte & 0x80 == 0 {
        actions = pool.shutDown()
        // Slots backing off are forgotten: no one is left to connect for.
        model.backingOff.removeAll()
      } else {
        // A slot's back-off ends.
        guard let id = model.backingOff.sorted().element(pick) else { continue }
        model.backingOff.remove(id)
        actions = pool.backoffElapsed(id)
      }
    case 15:
      guard let connection = model.busy.keys.sorted().element(pick) else { continue }
      model.busy[connection] = nil
      actions = pool.exchangeNotStarted(connection)
    default:
      continue
    }
    model.apply(actions)
    precondition(pool.connectionCount <= cap, "more connections than the cap")
    precondition(
      pool.connectionCount
        == model.connecting.count + model.busy.count + model.idle.count
        + model.backingOff.count,
      "the pool and its driver disagree on the connections")
  }
  var rounds = 0
  while rounds < 100_000 {
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
  precondition(model.open.isEmpty, "a request was never answered")
  return 0
}

private struct Model {
  var nextRequest = 0
  var open: Set<Int> = []
  var answered: Set<Int> = []
  var connecting: Set<Int> = []
  var busy: [Int: Int] = [:]
  var idle: Set<Int> = []
  var backingOff: Set<Int> = []

  mutating func apply(_ actions: [ConnectionPoolStateMachine.Action]) {
    for action in actions {
      switch action {
      case .connect(let id): connecting.insert(id)
      case .execute(let request, let connection):
        precondition(open.contains(request), "an answered request was executed")
        idle.remove(connection)
        busy[connection] = request
      case .fail(let request, _): answer(request)
      case .abortExchange: break
      case .close(let connection): idle.remove(connection)
      case .startIdleTimer(let connection): idle.insert(connection)
      case .cancelIdleTimer(let connection): idle.remove(connection)
      case .startBackoffTimer(let connection, _): backingOff.insert(connection)
      }
    }
  }

  mutating func answer(_ request: Int) {
    precondition(answered.insert(request).inserted, "a request answered twice")
    open.remove(request)
  }
}

extension Array {
  fileprivate func element(_ pick: Int) -> Element? { isEmpty ? nil : self[pick % count] }
}
