import Dispatch
import Streams
import Synchronization
import TestSupport
import Testing

@Suite struct CurrentValueSubjectTests {
  @Test func keepsThePublisherContract() {
    checkContract {
      let subject = CurrentValueSubject<Int, ContractError>(-1)
      return ContractRig(
        publisher: subject, send: { subject.send($0) },
        finish: { subject.send(completion: .finished) },
        fail: { subject.send(completion: .failure(.boom)) })
    }
  }

  @Test func newSubscriberGetsTheCurrentValueThenChanges() {
    let subject = CurrentValueSubject<String, Never>("a")
    let recorder = RecordingSubscriber<String, Never>()
    subject.subscribe(recorder)
    subject.value = "b"
    subject.send("c")
    #expect(recorder.values == ["a", "b", "c"])
    #expect(subject.value == "c")
  }

  @Test func subscriberWithoutDemandGetsTheNewestValueWhenItAsks() {
    let subject = CurrentValueSubject<Int, Never>(0)
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    subject.subscribe(recorder)
    (1...5).forEach(subject.send)
    #expect(recorder.values.isEmpty)
    recorder.request(.max(1))
    #expect(recorder.values == [5])
    subject.send(6)
    #expect(recorder.values == [5])
  }

  @Test func heldValueIsReleasedWhenReplacedAndWhenCancelled() {
    let subject = CurrentValueSubject<HeldToken?, Never>(nil)
    let recorder = RecordingSubscriber<HeldToken?, Never>(initialDemand: .none)
    subject.subscribe(recorder)
    weak var replaced: HeldToken?
    weak var cancelled: HeldToken?
    do {
      let first = HeldToken()
      replaced = first
      subject.send(first)
      let second = HeldToken()
      cancelled = second
      subject.send(second)
    }
    // The subscriber holds only the newest value; the subject's current value is the same.
    #expect(replaced == nil)
    recorder.cancel()
    subject.send(nil)
    #expect(cancelled == nil)
    #expect(recorder.values.isEmpty)
  }

  @Test func valueStopsChangingAfterCompletion() {
    let subject = CurrentValueSubject<Int, Never>(1)
    subject.send(completion: .finished)
    subject.value = 2
    #expect(subject.value == 1)
  }

  @Test func hammeredFromEightThreadsEndsConsistent() async {
    let subject = CurrentValueSubject<Int, Never>(-1)
    let last = Mutex<(count: Int, value: Int)>((0, 0))
    let cancellable = subject.sink { value in last.withLock { $0 = ($0.count + 1, value) } }
    await concurrentlyOnDedicatedThreads(iterations: 8) { thread in
      for value in 0..<20_000 { subject.value = thread * 100_000 + value }
    }
    let (count, value) = last.withLock { $0 }
    #expect(count == 8 * 20_000 + 1)
    #expect(value == subject.value)
    withExtendedLifetime(cancellable) {}
  }

  @Test func reentrantSendKeepsEverySubscriberInTheSameOrder() {
    let subject = CurrentValueSubject<Int, Never>(0)
    let first = RecordingSubscriber<Int, Never>(onValue: { _, value in
      if value % 2 == 1 { subject.send(value * 10) }
    })
    let second = RecordingSubscriber<Int, Never>()
    subject.subscribe(first)
    subject.subscribe(second)
    subject.send(1)
    subject.send(3)
    #expect(first.values == [0, 1, 10, 3, 30])
    #expect(second.values == [0, 1, 10, 3, 30])
    #expect(subject.value == 30)
  }
}

/// A value whose release a test can observe.
private final class HeldToken: Sendable {}
