// libFuzzer harness for `HTTP1ConnectionStateMachine`: the first byte picks the route (tunnel,
// TLS); each further byte is one event (connect, TCP up, tunnel open, handshake done, a
// failure or the connect timer, an exchange started quiet or not, bytes written, a write
// refused, readiness, bytes received, a head, a piece of body or the end parsed, a parse
// failure, the stream closed or failed, a pause and a resume, the sink's refusal, an abort,
// a close), whether or not it makes sense in the machine's state. After every event (a
// violation traps, which libFuzzer reports as a crash):
// - the owner hears of establishment at most once, and of each exchange at most once;
// - nothing is reported or delivered after the connection closed;
// - a head is delivered at most once per exchange, a body piece only after it;
// - never more bytes written than the request has;
// - a connection goes back to idle only with its whole request written and keep-alive;
// - `reusedAndSilent` only for a kept-alive connection with no answer byte;
// - a closed connection wants no readiness.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  guard let first = bytes.first else { return 0 }
  var machine = HTTP1ConnectionStateMachine(tunnels: first & 1 != 0, usesTLS: first & 2 != 0)
  var model = Model()
  let failure = HTTPError.unreachable(url: "http://h", reason: "refused")
  for byte in bytes.dropFirst() {
    let argument = Int(byte >> 5)
    let wasReused = machine.isReused
    let exchangeBefore = machine.exchange
    var action = HTTP1ConnectionStateMachine.Action.none
    switch byte & 0x1F {
    case 0: action = machine.connect()
    case 1: action = machine.socketConnected()
    case 2: action = machine.tunnelOpened()
    case 3: action = machine.handshakeDone()
    case 4: action = machine.establishmentFailed(failure)
    case 5, 6:
      // The owner never hands a request to a connection while its exchange runs.
      guard machine.exchange == nil else { continue }
      action = machine.startExchange(length: argument * 3, quiet: byte & 0x20 == 0)
    case 7, 8: machine.wrote(argument)
    case 9: machine.writeFailed()
    case 10, 11: action = machine.readiness(canRead: byte & 0x20 != 0, canWrite: byte & 0x40 != 0)
    case 12: machine.bytesReceived()
    case 13: action = machine.receivedHead()
    case 14, 15: action = machine.receivedBody()
    case 16: action = machine.receivedEnd(keepAlive: byte & 0x20 == 0)
    case 17: action = machine.parseFailed("bad")
    case 18: action = machine.endedInsideAnswer(expected: argument, received: 0)
    case 19: action = machine.streamClosed()
    case 20: action = machine.streamFailed("reset")
    case 21: machine.pauseReading()
    case 22: action = machine.resumeReading()
    case 23: action = machine.sinkRefused(.cancelled)
    case 24: action = machine.abort(.cancelled)
    case 25: action = machine.close()
    case 26: action = machine.strayBytesWhileIdle()
    default: continue
    }
    model.check(action, wasReused: wasReused, exchange: exchangeBefore, machine: machine)
  }
  return 0
}

/// What the driver saw, to check the machine against.
struct Model {
  var establishmentReports = 0
  var closed = false
  /// The exchange the driver runs: whether its head was delivered, whether it was reported.
  var exchangeOpen = false
  var headDelivered = false

  mutating func check(
    _ action: HTTP1ConnectionStateMachine.Action, wasReused: Bool,
    exchange: HTTP1ConnectionStateMachine.Exchange?, machine: HTTP1ConnectionStateMachine
  ) {
    if closed {
      switch action {
      // A request handed to a closed connection is refused, so its owner hears of it.
      case .none, .close, .refuseExchange: break
      default: preconditionFailure("an action after the connection closed: \(action)")
      }
    }
    switch action {
    case .reportEstablished, .failConnecting:
      establishmentReports += 1
      precondition(establishmentReports == 1, "establishment reported twice")
      if case .failConnecting = action { closed = true }
    case .startExchange:
      precondition(!exchangeOpen, "an exchange started over another")
      exchangeOpen = true
      headDelivered = false
    case .refuseExchange:
      precondition(!exchangeOpen, "an exchange refused while one runs")
      closed = true
    case .deliverHead:
      precondition(exchangeOpen && !headDelivered, "a head delivered twice or without exchange")
      headDelivered = true
    case .deliverBody:
      precondition(exchangeOpen && headDelivered, "a body piece before the head")
    case .finishExchange(let reusable):
      precondition(exchangeOpen && headDelivered, "an end without an exchange or a head")
      if reusable {
        precondition(
          exchange.map { $0.written == $0.length && !$0.writeFailed } ?? false,
          "reused with part of the request unwritten")
      } else {
        closed = true
      }
      exchangeOpen = false
    case .failExchange(_, let reusedAndSilent):
      precondition(exchangeOpen, "an exchange failed that does not run")
      if reusedAndSilent {
        precondition(
          wasReused && !(exchange?.anyByte ?? true), "stale without being kept-alive and silent")
      }
      exchangeOpen = false
      closed = true
    case .closeIdle:
      precondition(!exchangeOpen, "an idle close while an exchange runs")
      closed = true
    case .close:
      closed = true
      exchangeOpen = false
    default:
      break
    }
    if let current = machine.exchange {
      precondition(current.written <= current.length, "more written than the request")
    }
    if closed {
      precondition(machine.state == .closed, "the driver closed, the machine did not")
      precondition(machine.interest == (false, false), "a closed connection wants readiness")
    }
  }
}
