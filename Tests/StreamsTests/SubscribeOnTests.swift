import Dispatch
import Streams
import Synchronization
import TestSupport
import Testing

@Suite struct SubscribeOnTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.subscribe(on: ImmediateScheduler.shared) }
  }

  @Test func subscribesOnlyWhenTheSchedulerRuns() {
    let scheduler = TestScheduler()
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.subscribe(on: scheduler).subscribe(recorder)
    #expect(subject.subscriberCount == 0)
    #expect(recorder.events == [])
    scheduler.advance()
    #expect(subject.subscriberCount == 1)
    subject.send(1)
    #expect(recorder.values == [1])
  }

  @Test func requestsAndCancelGoThroughTheScheduler() {
    let scheduler = TestScheduler()
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    subject.subscribe(on: scheduler).subscribe(recorder)
    scheduler.advance()
    recorder.request(.max(1))
    subject.send(1)
    #expect(recorder.values == [])
    scheduler.advance()
    subject.send(2)
    #expect(recorder.values == [2])
    recorder.cancel()
    subject.send(3)
    #expect(recorder.values == [2])
    #expect(subject.subscriberCount == 1)
    scheduler.advance()
    #expect(subject.subscriberCount == 0)
  }

  @Test func subscribesOnARealQueue() async throws {
    let queue = DispatchQueue(label: "subscribe-on")
    let key = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: key, value: true)
    let onQueue = Mutex<Bool?>(nil)
    let recorder = RecordingSubscriber<Int, Never>()
    Deferred {
      onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) ?? false }
      return Just(1)
    }.subscribe(on: queue).subscribe(recorder)
    try await waitUntil("the value") { recorder.values == [1] }
    #expect(onQueue.withLock { $0 } == true)
  }
}
