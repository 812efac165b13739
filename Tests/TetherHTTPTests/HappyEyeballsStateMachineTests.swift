import Testing

@testable import TetherHTTP

/// Connecting to a host's addresses (RFC 8305), event by event, without sockets or clocks.
@Suite struct HappyEyeballsStateMachineTests {
  typealias Machine = HappyEyeballsStateMachine

  let v6a = SocketAddress.numeric("2001:db8::1", port: 80)![0]
  let v6b = SocketAddress.numeric("2001:db8::2", port: 80)![0]
  let v4a = SocketAddress.numeric("192.0.2.1", port: 80)![0]
  let v4b = SocketAddress.numeric("192.0.2.2", port: 80)![0]

  /// A machine that resolved `addresses`, with the actions it returned.
  private func resolved(
    _ addresses: [SocketAddress], timeout: Duration = .seconds(10)
  ) -> (Machine, [Machine.Action]) {
    var machine = Machine(connectTimeout: timeout)
    #expect(machine.start() == [.resolve])
    let actions = machine.resolved(addresses)
    return (machine, actions)
  }

  @Test func theFamiliesAlternateStartingWithTheResolversFirst() {
    #expect(Machine.interleaved([v6a, v6b, v4a, v4b]) == [v6a, v4a, v6b, v4b])
    #expect(Machine.interleaved([v4a, v4b, v6a]) == [v4a, v6a, v4b])
    #expect(Machine.interleaved([v4a, v4b]) == [v4a, v4b])
  }

  @Test func theFirstAttemptStartsAtOnceWithItsOwnTimeoutAndTheAttemptDelay() {
    let (_, actions) = resolved([v6a, v4a])
    // Two addresses share the 10 s connect timeout: 5 s each.
    #expect(
      actions == [
        .startAttempt(0, v6a), .startTimer(.attemptTimeout(0), after: .seconds(5)),
        .startTimer(.nextAttempt, after: .milliseconds(250)),
      ])
  }

  @Test func aSilentAddressGetsCompanyAfter250MillisecondsAndTheFirstToConnectWins() {
    var (machine, _) = resolved([v6a, v4a])
    // The IPv6 address says nothing; 250 ms later IPv4 starts beside it (the last address:
    // no timeout of its own, the owner's connect timeout covers it).
    #expect(machine.timerFired(.nextAttempt) == [.startAttempt(1, v4a)])
    #expect(machine.attemptsInFlight == 2)
    // IPv4 connects: the IPv6 attempt closes and its timer stops.
    #expect(
      machine.attemptConnected(1) == [
        .cancelTimer(.attemptTimeout(0)), .closeAttempt(0), .succeed(1),
      ])
    #expect(machine.isFinished)
    // A late report of the loser changes nothing.
    #expect(machine.attemptConnected(0) == [])
    #expect(machine.attemptFailed(0, reason: "connection refused") == [])
  }

  @Test func aFailureStartsTheNextAddressAtOnce() {
    var (machine, _) = resolved([v6a, v4a, v6b])
    #expect(
      machine.attemptFailed(0, reason: "network unreachable") == [
        .closeAttempt(0), .cancelTimer(.attemptTimeout(0)),
        .startAttempt(1, v4a), .startTimer(.attemptTimeout(1), after: .seconds(10) / 3),
        .startTimer(.nextAttempt, after: .milliseconds(250)),
      ])
    // The last address stops the attempt delay: nothing is left to start.
    #expect(
      machine.attemptFailed(1, reason: "connection refused") == [
        .closeAttempt(1), .cancelTimer(.attemptTimeout(1)), .startAttempt(2, v6b),
        .cancelTimer(.nextAttempt),
      ])
    #expect(machine.timerFired(.nextAttempt) == [])
    #expect(
      machine.attemptFailed(2, reason: "connection refused") == [
        .closeAttempt(2), .fail(.unreachable("connection refused")),
      ])
    #expect(machine.isFinished)
  }

  @Test func aBlackHoledAddressEndsAtItsOwnTimeoutWhileAnotherIsStillTrying() {
    var (machine, _) = resolved([v6a, v4a], timeout: .seconds(4))
    _ = machine.timerFired(.nextAttempt)
    #expect(
      machine.timerFired(.attemptTimeout(0)) == [.closeAttempt(0)])
    #expect(machine.attemptsInFlight == 1)
    // The last one fails too: the machine fails with its reason.
    #expect(
      machine.attemptFailed(1, reason: "connection refused") == [
        .closeAttempt(1), .fail(.unreachable("connection refused")),
      ])
  }

  @Test func anAttemptsOwnTimeoutIsNeverUnderOneSecondNorOverTheConnectTimeout() {
    let many = (1...50).map { SocketAddress.numeric("192.0.2.\($0)", port: 80)![0] }
    #expect(resolved(many).0.attemptTimeout == .seconds(1))
    #expect(
      resolved([v4a, v4b], timeout: .milliseconds(300)).0.attemptTimeout == .milliseconds(300))
  }

  @Test func noAddressFailsAsHostNotFound() {
    var machine = Machine(connectTimeout: .seconds(1))
    _ = machine.start()
    #expect(machine.resolved(nil) == [.fail(.hostNotFound)])
    var empty = Machine(connectTimeout: .seconds(1))
    _ = empty.start()
    #expect(empty.resolved([]) == [.fail(.hostNotFound)])
  }

  @Test func cancellingClosesEveryAttemptAndReportsNothing() {
    var (machine, _) = resolved([v6a, v4a, v6b])
    _ = machine.timerFired(.nextAttempt)
    #expect(
      machine.cancel() == [
        .cancelTimer(.nextAttempt), .cancelTimer(.attemptTimeout(0)),
        .cancelTimer(.attemptTimeout(1)), .closeAttempt(0), .closeAttempt(1),
      ])
    #expect(machine.cancel() == [])
    #expect(machine.timerFired(.nextAttempt) == [])
    #expect(machine.attemptConnected(0) == [])
  }

  @Test func aSingleAddressHasNoTimerOfItsOwn() {
    let (_, actions) = resolved([v4a])
    #expect(actions == [.startAttempt(0, v4a)])
  }
}
