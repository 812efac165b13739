import Dispatch
import Streams
import Testing

/// The error that contract rigs fail their upstream with.
enum ContractError: Error, Equatable { case boom }

/// How the contract drives a publisher under test.
///
/// `send(n)` feeds the n-th input (a subject upstream, say), `finish()` and `fail()` complete
/// the source, and `settle()` lets time pass for publishers that need it (advance a
/// `TestScheduler`). Publishers with a fixed source (`Just`, `Sequence.publisher`) leave
/// `send`, `finish` and `fail` as no-ops.
struct ContractRig<P: Publisher> where P.Output: Sendable {
  var publisher: P
  var send: (Int) -> Void = { _ in }
  var finish: () -> Void = {}
  var fail: () -> Void = {}
  var settle: () -> Void = {}
}

/// Runs the contract every publisher keeps against an operator applied to a fresh
/// `PassthroughSubject<Int, ContractError>`.
///
/// ```swift
/// @Test func contract() { checkOperatorContract { $0.map { $0 * 2 } } }
/// ```
func checkOperatorContract<P: Publisher>(
  exactDemand: Bool = true,
  settle: @escaping () -> Void = {},
  sourceLocation: SourceLocation = #_sourceLocation,
  _ transform: @escaping (PassthroughSubject<Int, ContractError>) -> P
) where P.Output: Sendable {
  checkContract(exactDemand: exactDemand, sourceLocation: sourceLocation) {
    let upstream = PassthroughSubject<Int, ContractError>()
    return ContractRig(
      publisher: transform(upstream), send: { upstream.send($0) },
      finish: { upstream.send(completion: .finished) },
      fail: { upstream.send(completion: .failure(.boom)) }, settle: settle)
  }
}

/// Runs the contract every publisher keeps, on fresh rigs from `makeRig`:
/// the subscription arrives once and first; demand is honoured exactly (`.max(3)` gives at
/// most three values, and more only after asking); nothing arrives after a completion or after
/// `cancel()` returns; `cancel()` is idempotent and safe from many threads at once; and the
/// publisher releases its subscriber and inner subscription after completion or cancel.
///
/// With `exactDemand: false` (time-based operators), counts are checked as upper bounds.
func checkContract<P: Publisher>(
  exactDemand: Bool = true,
  sourceLocation: SourceLocation = #_sourceLocation,
  _ makeRig: () -> ContractRig<P>
) where P.Output: Sendable {
  let location = sourceLocation
  typealias Recorder = RecordingSubscriber<P.Output, P.Failure>
  let firstInputs = 0..<20
  let laterInputs = 20..<40

  // Reference run with unlimited demand: how many values each phase produces.
  let reference: (afterFirst: Int, afterLater: Int)
  do {
    let rig = makeRig()
    let recorder = Recorder()
    rig.publisher.subscribe(recorder)
    firstInputs.forEach(rig.send)
    rig.settle()
    let afterFirst = recorder.values.count
    laterInputs.forEach(rig.send)
    rig.settle()
    reference = (afterFirst, recorder.values.count)
    rig.finish()
    rig.settle()
    let events = recorder.events
    #expect(recorder.subscriptionCount == 1, "subscription exactly once", sourceLocation: location)
    if case .subscription = events.first {
    } else {
      Issue.record(
        "the subscription must arrive first: \(events.prefix(3))", sourceLocation: location)
    }
    #expect(recorder.completions.count <= 1, "at most one completion", sourceLocation: location)
    if !recorder.completions.isEmpty, case .completion = events.last {
    } else if !recorder.completions.isEmpty {
      Issue.record("nothing may follow the completion", sourceLocation: location)
    }
  }

  // Demand: .max(3), then nothing more until asked, then .max(2) more.
  do {
    let rig = makeRig()
    let recorder = Recorder(initialDemand: .max(3))
    rig.publisher.subscribe(recorder)
    firstInputs.forEach(rig.send)
    rig.settle()
    let firstCount = recorder.values.count
    if exactDemand {
      #expect(
        firstCount == min(3, reference.afterFirst), "gets exactly what it asked for",
        sourceLocation: location)
    } else {
      #expect(firstCount <= 3, "never more than demanded", sourceLocation: location)
    }
    if firstCount == 3 {
      firstInputs.forEach { rig.send($0 + 100) }
      rig.settle()
      #expect(
        recorder.values.count == firstCount, "nothing more until it asks",
        sourceLocation: location)
    }
    recorder.request(.max(2))
    laterInputs.forEach(rig.send)
    rig.settle()
    if exactDemand {
      #expect(
        recorder.values.count == min(5, reference.afterLater), "gets what it asked for next",
        sourceLocation: location)
    } else {
      #expect(recorder.values.count <= 5, "never more than demanded", sourceLocation: location)
    }
    recorder.cancel()
  }

  // Nothing after a completion, whether it finished or failed.
  for failing in [false, true] {
    let rig = makeRig()
    let recorder = Recorder()
    rig.publisher.subscribe(recorder)
    (0..<5).forEach(rig.send)
    if failing { rig.fail() } else { rig.finish() }
    rig.settle()
    let count = recorder.events.count
    (5..<10).forEach(rig.send)
    rig.finish()
    rig.fail()
    rig.settle()
    #expect(recorder.events.count == count, "nothing after completion", sourceLocation: location)
    #expect(recorder.completions.count <= 1, "one completion", sourceLocation: location)
  }

  // Nothing after cancel, from inside receive or from outside; cancel is idempotent.
  do {
    let rig = makeRig()
    let recorder = Recorder(onValue: { recorder, _ in recorder.cancel() })
    rig.publisher.subscribe(recorder)
    firstInputs.forEach(rig.send)
    rig.settle()
    #expect(
      recorder.values.count == min(1, reference.afterFirst), "cancel inside receive stops at once",
      sourceLocation: location)
    let events = recorder.events
    if let index = events.firstIndex(where: { if case .value = $0 { true } else { false } }) {
      #expect(
        index == events.count - 1, "nothing after the value that cancelled",
        sourceLocation: location)
    }
  }
  do {
    let rig = makeRig()
    let recorder = Recorder()
    rig.publisher.subscribe(recorder)
    recorder.cancel()
    let count = recorder.events.count
    recorder.cancel()
    firstInputs.forEach(rig.send)
    rig.finish()
    rig.settle()
    #expect(recorder.events.count == count, "nothing after cancel()", sourceLocation: location)
  }
  do {
    let rig = makeRig()
    let recorder = Recorder()
    rig.publisher.subscribe(recorder)
    DispatchQueue.concurrentPerform(iterations: 8) { _ in recorder.cancel() }
    let count = recorder.events.count
    firstInputs.forEach(rig.send)
    rig.settle()
    #expect(
      recorder.events.count == count, "nothing after racing cancels", sourceLocation: location)
  }

  // No leaks: after cancel, and after completion, the subscriber and the inner subscription
  // are released although the source (the rig) lives on.
  for ending in ["cancel", "finish", "fail"] {
    let rig = makeRig()
    weak var weakRecorder: Recorder?
    weak var weakSubscription: AnyObject?
    do {
      let recorder = Recorder()
      weakRecorder = recorder
      rig.publisher.subscribe(recorder)
      (0..<3).forEach(rig.send)
      rig.settle()
      weakSubscription = recorder.subscriptionObject
      switch ending {
      case "cancel": recorder.cancel()
      case "finish": rig.finish()
      default: rig.fail()
      }
      rig.settle()
      if ending != "cancel" && recorder.completions.isEmpty {
        recorder.cancel()  // a publisher that ignores its source's completion (e.g. Just)
      }
    }
    #expect(weakRecorder == nil, "subscriber released after \(ending)", sourceLocation: location)
    #expect(
      weakSubscription == nil, "inner subscription released after \(ending)",
      sourceLocation: location)
    withExtendedLifetime(rig.publisher) {}
  }
}
