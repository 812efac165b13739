import Testing

@testable import TetherHTTP

/// The connection's state machine, event by event, without a socket or a clock.
@Suite struct HTTP1ConnectionStateMachineTests {
  typealias Machine = HTTP1ConnectionStateMachine
  let refused = HTTPError.unreachable(url: "http://h", reason: "connection refused")

  /// A plain connection, established and idle.
  func idle() -> Machine {
    var machine = Machine(tunnels: false, usesTLS: false)
    _ = machine.connect()
    _ = machine.socketConnected()
    return machine
  }

  /// A connection that answered `count` exchanges and is idle again.
  func reused(after count: Int = 1) -> Machine {
    var machine = idle()
    for _ in 0..<count {
      _ = machine.startExchange(length: 10, quiet: true)
      machine.wrote(10)
      machine.bytesReceived()
      _ = machine.receivedHead()
      _ = machine.receivedEnd(keepAlive: true)
    }
    return machine
  }

  @Test func establishmentGoesThroughTheTunnelThenTheHandshake() {
    var machine = Machine(tunnels: true, usesTLS: true)
    #expect(machine.connect() == .connect)
    #expect(machine.connect() == .none)
    #expect(machine.socketConnected() == .openTunnel)
    #expect(machine.state == .tunnelling)
    #expect(machine.tunnelOpened() == .startHandshake)
    #expect(machine.state == .handshaking)
    #expect(machine.interest == (reading: true, writing: false))
    #expect(machine.handshakeDone() == .reportEstablished)
    #expect(machine.state == .idle)
  }

  @Test func aPlainDirectConnectionIsEstablishedOnceTCPIsUp() {
    var machine = Machine(tunnels: false, usesTLS: false)
    _ = machine.connect()
    #expect(machine.socketConnected() == .reportEstablished)
    #expect(machine.state == .idle)
  }

  @Test func establishmentFailsOnceAndTheTimerAfterItDoesNothing() {
    var machine = Machine(tunnels: false, usesTLS: true)
    _ = machine.connect()
    _ = machine.socketConnected()
    #expect(machine.establishmentFailed(refused) == .failConnecting(refused))
    let late = HTTPError.timedOut(url: "http://h", after: 1)
    #expect(machine.establishmentFailed(late) == .none)
    #expect(machine.handshakeDone() == .none)
    #expect(machine.state == .closed)
  }

  @Test func anExchangeWritesReadsAndGoesBackToIdleWhenTheAnswerKeepsAlive() {
    var machine = idle()
    #expect(machine.startExchange(length: 100, quiet: true) == .startExchange)
    #expect(machine.interest == (reading: true, writing: true))
    machine.wrote(60)
    #expect(
      machine.readiness(canRead: false, canWrite: true) == .transfer(write: true, read: false))
    machine.wrote(40)
    #expect(machine.interest == (reading: true, writing: false))
    #expect(machine.readiness(canRead: true, canWrite: true) == .transfer(write: false, read: true))
    machine.bytesReceived()
    #expect(machine.receivedHead() == .deliverHead)
    #expect(machine.receivedBody() == .deliverBody)
    #expect(machine.receivedEnd(keepAlive: true) == .finishExchange(reusable: true))
    #expect(machine.state == .idle && machine.isReused)
  }

  @Test func anAnswerBeforeTheWholeRequestWasWrittenClosesTheConnection() {
    // A 413 to an upload arrives while the body is still being sent: the answer is delivered,
    // but the connection is not reused (the server would read the rest as a new request).
    var machine = idle()
    _ = machine.startExchange(length: 100, quiet: true)
    machine.wrote(10)
    machine.writeFailed()
    #expect(machine.interest == (reading: true, writing: false))
    machine.bytesReceived()
    _ = machine.receivedHead()
    #expect(machine.receivedEnd(keepAlive: true) == .finishExchange(reusable: false))
    #expect(machine.state == .closed)
  }

  @Test func anAnswerThatClosesIsNotReused() {
    var machine = idle()
    _ = machine.startExchange(length: 1, quiet: true)
    machine.wrote(1)
    machine.bytesReceived()
    _ = machine.receivedHead()
    #expect(machine.receivedEnd(keepAlive: false) == .finishExchange(reusable: false))
  }

  @Test func aReusedConnectionThatIsNotQuietIsRefusedWithoutSending() {
    var machine = reused()
    #expect(machine.startExchange(length: 10, quiet: false) == .refuseExchange)
    #expect(machine.state == .closed)
    // A new connection is quiet by definition.
    var fresh = idle()
    #expect(fresh.startExchange(length: 10, quiet: false) == .startExchange)
  }

  @Test func aRequestHandedToAClosedConnectionIsStillAnswered() {
    // The owner hears of every request it handed over, even one that arrives just after the
    // connection closed.
    var machine = idle()
    _ = machine.strayBytesWhileIdle()
    #expect(machine.startExchange(length: 10, quiet: true) == .refuseExchange)
  }

  @Test func aReusedConnectionThatEndsBeforeAnyByteIsStale() {
    var machine = reused()
    _ = machine.startExchange(length: 10, quiet: true)
    machine.wrote(10)
    #expect(machine.streamClosed() == .failExchange(.silentEnd, reusedAndSilent: true))
    // A new connection that ends silently is not stale: the server saw the request.
    var fresh = idle()
    _ = fresh.startExchange(length: 10, quiet: true)
    #expect(fresh.streamClosed() == .failExchange(.silentEnd, reusedAndSilent: false))
  }

  @Test func aStreamFailureNamesItsReasonUnlessAKeptAliveConnectionWasSilent() {
    var fresh = idle()
    _ = fresh.startExchange(length: 10, quiet: true)
    #expect(
      fresh.streamFailed("certificate required")
        == .failExchange(.stream("certificate required"), reusedAndSilent: false))
    var machine = reused()
    _ = machine.startExchange(length: 10, quiet: true)
    #expect(machine.streamFailed("reset") == .failExchange(.silentEnd, reusedAndSilent: true))
  }

  @Test func theEndOfTheStreamAfterSomeAnswerLetsTheParserDecide() {
    var machine = idle()
    _ = machine.startExchange(length: 10, quiet: true)
    machine.bytesReceived()
    _ = machine.receivedHead()
    #expect(machine.streamClosed() == .finishParsing)
    #expect(
      machine.endedInsideAnswer(expected: 100, received: 7)
        == .failExchange(.truncated(expected: 100, received: 7), reusedAndSilent: false))
    #expect(
      Machine.Failure.truncated(expected: 100, received: 7).httpError(url: "http://h/a")
        == .truncated(url: "http://h/a", expected: 100, received: 7))
  }

  @Test func aPausedExchangeStopsReadingUntilResumed() {
    var machine = idle()
    _ = machine.startExchange(length: 1, quiet: true)
    machine.wrote(1)
    machine.pauseReading()
    #expect(machine.interest == (reading: false, writing: false))
    #expect(
      machine.readiness(canRead: true, canWrite: false) == .transfer(write: false, read: false))
    #expect(machine.resumeReading() == .resumeReading)
    #expect(machine.resumeReading() == .none)
    #expect(machine.isReading)
  }

  @Test func theSinkRefusingTheHeadFailsTheExchangeWithItsError() {
    var machine = reused()
    _ = machine.startExchange(length: 1, quiet: true)
    machine.bytesReceived()
    _ = machine.receivedHead()
    let tooLarge = HTTPError.tooLarge(url: "http://h/a", limit: 10)
    #expect(
      machine.sinkRefused(tooLarge) == .failExchange(.error(tooLarge), reusedAndSilent: false))
    #expect(machine.receivedEnd(keepAlive: true) == .none)
  }

  @Test func nothingIsDeliveredOutOfOrder() {
    var machine = idle()
    _ = machine.startExchange(length: 1, quiet: true)
    // A body or an end before the head is never delivered.
    #expect(machine.receivedBody() == .none)
    #expect(machine.receivedEnd(keepAlive: true) == .none)
    #expect(machine.receivedHead() == .deliverHead)
    #expect(machine.receivedHead() == .none)
  }

  @Test func anAbortIsNeverStaleAndEndsEstablishmentOrTheExchange() {
    var machine = reused()
    _ = machine.startExchange(length: 1, quiet: true)
    #expect(machine.abort(.cancelled) == .failExchange(.error(.cancelled), reusedAndSilent: false))
    #expect(machine.abort(.cancelled) == .none)
    var connecting = Machine(tunnels: false, usesTLS: false)
    _ = connecting.connect()
    #expect(connecting.abort(.cancelled) == .failConnecting(.cancelled))
    var idle = idle()
    #expect(idle.abort(.cancelled) == .close)
  }

  @Test func anIdleConnectionEndsOnAStrayByteOrItsEnd() {
    var machine = idle()
    #expect(machine.readiness(canRead: true, canWrite: false) == .readIdle)
    #expect(machine.strayBytesWhileIdle() == .closeIdle)
    #expect(machine.state == .closed)
    var closing = idle()
    #expect(closing.streamClosed() == .closeIdle)
  }

  @Test func aParseFailureNamesTheParsersReason() {
    var machine = idle()
    _ = machine.startExchange(length: 1, quiet: true)
    machine.bytesReceived()
    #expect(
      machine.parseFailed("bad status line")
        == .failExchange(.notHTTP("bad status line"), reusedAndSilent: false))
    #expect(
      Machine.Failure.notHTTP("bad status line").httpError(url: "http://h/a")
        == .unreachable(url: "http://h/a", reason: "not an HTTP response: bad status line"))
  }
}
