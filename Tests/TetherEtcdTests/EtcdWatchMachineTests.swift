import Foundation
import Testing

@testable import TetherEtcd

/// The shared watch stream's state machine, event by event, without a socket or a clock.
struct EtcdWatchMachineTests {
  typealias Action = EtcdWatchMachine.Action

  static func key(_ index: Int) -> Data { Data("/k/\(index)".utf8) }

  static func event(_ index: Int, at revision: Int64, _ value: String = "v") -> EtcdEvent {
    EtcdEvent(
      kind: .put,
      keyValue: EtcdKeyValue(
        key: key(index), value: Data(value.utf8), createRevision: 1, modRevision: revision,
        version: 1, lease: 0))
  }

  static func created(_ watchID: Int64) -> EtcdWatchMessage {
    EtcdWatchMessage(revision: 10, watchID: watchID, created: true)
  }

  /// A machine with `count` watches from revision 5, on an open stream (generation 1) whose
  /// watches were all created and whose member answered the probe.
  static func current(_ count: Int, endpoints: Int = 3) -> EtcdWatchMachine {
    var machine = EtcdWatchMachine(endpointCount: endpoints)
    for index in 0..<count {
      _ = machine.add(UInt64(index), key: key(index), rangeEnd: nil, from: 5)
    }
    _ = machine.reopenDue()
    _ = machine.received(created(0), generation: 1)
    _ = machine.probeAnswered(generation: 1, error: nil)
    return machine
  }

  @Test func twoHundredAdditionsOpenOneStreamOnceWithOneRangeWatchOverTheirSpan() {
    var machine = EtcdWatchMachine(endpointCount: 3)
    var actions: [Action] = []
    for index in 0..<200 {
      actions += machine.add(
        UInt64(index), key: Self.key(index), rangeEnd: nil, from: Int64(7 + index % 3))
    }
    #expect(actions == [.scheduleReopen(afterFailures: 0)])
    // "/k/0" is the smallest key and "/k/99" the largest; the span ends right after it.
    let span = EtcdWatchMachine.Create(
      key: Self.key(0), rangeEnd: Self.key(99) + [0], startRevision: 7)
    #expect(machine.reopenDue() == [.open(generation: 1, endpoint: 0, create: span)])
    #expect(machine.streamMembers.count == 200)
    // Each event of the span goes to its own key's watch only.
    let message = EtcdWatchMessage(
      revision: 12, events: [Self.event(42, at: 11), Self.event(150, at: 12)])
    #expect(
      machine.received(message, generation: 1) == [
        .deliver(42, [Self.event(42, at: 11)]), .deliver(150, [Self.event(150, at: 12)]),
      ])
  }

  @Test func aSingleKeyIsWatchedExactlyAndAPrefixWatchGetsEveryKeyUnderIt() {
    var machine = EtcdWatchMachine(endpointCount: 1)
    _ = machine.add(0, key: Self.key(1), rangeEnd: nil, from: 3)
    #expect(
      machine.reopenDue() == [
        .open(
          generation: 1, endpoint: 0,
          create: .init(key: Self.key(1), rangeEnd: nil, startRevision: 3))
      ])
    let prefix = Data("/k/".utf8)
    _ = machine.add(1, key: prefix, rangeEnd: EtcdWire.prefixEnd(prefix), from: 3)
    let reopened = machine.reopenDue()
    #expect(
      reopened.last
        == .open(
          generation: 2, endpoint: 0,
          create: .init(key: prefix, rangeEnd: EtcdWire.prefixEnd(prefix), startRevision: 3)))
    let message = EtcdWatchMessage(
      revision: 5, events: [Self.event(1, at: 4), Self.event(2, at: 5)])
    #expect(
      machine.received(message, generation: 2) == [
        .deliver(0, [Self.event(1, at: 4)]),
        .deliver(1, [Self.event(1, at: 4), Self.event(2, at: 5)]),
      ])
  }

  @Test func eachEventIsDeliveredOnceAcrossAReopen() {
    var machine = Self.current(2)
    let first = EtcdWatchMessage(revision: 6, events: [Self.event(1, at: 6)])
    #expect(machine.received(first, generation: 1) == [.deliver(1, [Self.event(1, at: 6)])])
    // A third key joins: the stream re-opens from the smallest next revision.
    #expect(
      machine.add(2, key: Self.key(2), rangeEnd: nil, from: 6) == [
        .scheduleReopen(afterFailures: 0)
      ])
    let reopened = machine.reopenDue()
    #expect(reopened.first == .close(generation: 1))
    guard case .open(2, 0, let create)? = reopened.last else {
      Issue.record("expected an open, got \(reopened)")
      return
    }
    #expect(create.startRevision == 5)
    // The closed stream's late message is ignored; the new stream's repeat of revision 6 too.
    let late = EtcdWatchMessage(revision: 7, events: [Self.event(0, at: 7)])
    #expect(machine.received(late, generation: 1).isEmpty)
    let repeated = EtcdWatchMessage(
      revision: 8, events: [Self.event(1, at: 6), Self.event(1, at: 8)])
    #expect(machine.received(repeated, generation: 2) == [.deliver(1, [Self.event(1, at: 8)])])
    #expect(machine.nextRevision(of: 1) == 9)
  }

  @Test func aCompactedSpanReReadsEveryWatchAndRejoinsFromTheReadRevisions() {
    var machine = Self.current(2)
    let canceled = EtcdWatchMessage(revision: 10, canceled: true, compactRevision: 9)
    #expect(
      machine.received(canceled, generation: 1) == [
        .close(generation: 1), .resync(0), .resync(1),
      ])
    #expect(machine.resynced(0, revision: 12) == [.scheduleReopen(afterFailures: 0)])
    #expect(machine.resynced(1, revision: 14).isEmpty)
    guard case .open(2, _, let create)? = machine.reopenDue().last else {
      Issue.record("expected an open")
      return
    }
    #expect(create.startRevision == 12)
  }

  @Test func aSilentMemberThatDoesNotAnswerIsReportedAtOnceAndLeft() {
    var machine = Self.current(2)
    #expect(machine.silent(generation: 1) == [.probe(generation: 1, endpoint: 0, key: Self.key(0))])
    // A second silence while the probe runs asks nothing more.
    #expect(machine.silent(generation: 1).isEmpty)
    let failure = EtcdError.unavailable(reason: "timed out")
    let actions = machine.probeAnswered(generation: 1, error: failure)
    #expect(actions.first == .close(generation: 1))
    guard case .report(let error?, let ids)? = actions.dropFirst().first else {
      Issue.record("expected a report, got \(actions)")
      return
    }
    #expect(ids == [0, 1])
    #expect("\(error)".contains("did not answer"))
    #expect(actions.last == .scheduleReopen(afterFailures: 0))
    // The next stream is on the next endpoint.
    #expect(
      machine.reopenDue().last.map { if case .open(2, 1, _) = $0 { true } else { false } } == true)
  }

  @Test func recoveryIsReportedOnlyOnceTheNewStreamIsProvenCurrent() {
    var machine = Self.current(2)
    let broken = EtcdError.unavailable(reason: "reset")
    // One stream ending is routine: re-opened at once on the next endpoint, not reported.
    #expect(
      machine.ended(generation: 1, error: broken) == [
        .close(generation: 1), .scheduleReopen(afterFailures: 0),
      ])
    _ = machine.reopenDue()
    // A second failure in a row is reported, and the re-open backs off.
    #expect(
      machine.ended(generation: 2, error: broken) == [
        .close(generation: 2), .report(broken, to: [0, 1]), .scheduleReopen(afterFailures: 1),
      ])
    _ = machine.reopenDue()
    // Re-attached and created on a member: not yet recovery.
    #expect(
      machine.received(Self.created(0), generation: 3) == [
        .probe(generation: 3, endpoint: 2, key: Self.key(0))
      ])
    // The member cannot serve a linearizable read (no quorum): still failing.
    let stale = machine.probeAnswered(generation: 3, error: broken)
    #expect(!stale.contains(.report(nil, to: [0, 1])))
    _ = machine.reopenDue()
    _ = machine.received(Self.created(0), generation: 4)
    #expect(machine.probeAnswered(generation: 4, error: nil) == [.report(nil, to: [0, 1])])
  }

  @Test func theLastWatchLeavingClosesTheStreamAndOthersLeavingDoNotReopenIt() {
    var machine = Self.current(2)
    #expect(machine.remove(0).isEmpty)
    #expect(machine.streamMembers == [0, 1])
    // The removed watch's events are dropped.
    let event = EtcdWatchMessage(revision: 11, events: [Self.event(0, at: 11)])
    #expect(machine.received(event, generation: 1).isEmpty)
    #expect(machine.remove(1) == [.close(generation: 1)])
    #expect(machine.watchCount == 0)
  }

  @Test func aProgressNotificationMovesTheResumePointWithoutDelivering() {
    var machine = Self.current(2)
    let progress = EtcdWatchMessage(revision: 20)
    #expect(machine.received(progress, generation: 1).isEmpty)
    #expect(machine.nextRevision(of: 0) == 21)
    #expect(machine.nextRevision(of: 1) == 21)
  }

  /// Issue 32, item 6: a message too long to read costs its events, not the stream: every
  /// watch re-reads its key and rejoins, and none is reported as failing.
  @Test func aMessageTooLongToReadReReadsEveryWatchInsteadOfFailingTheStream() {
    var machine = Self.current(2)
    #expect(
      machine.received(.oversizedMarker, generation: 1) == [
        .close(generation: 1), .resync(0), .resync(1),
      ])
    #expect(machine.resynced(0, revision: 30) == [.scheduleReopen(afterFailures: 0)])
    #expect(machine.resynced(1, revision: 30).isEmpty)
    guard case .open(2, _, let create)? = machine.reopenDue().last else {
      Issue.record("expected an open")
      return
    }
    #expect(create.startRevision == 30)
  }
}
