import Dispatch
import Streams
import Synchronization
import Testing

@Suite struct ReceiveOnTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  @Test func deliversValuesAndCompletionOnlyWhenTheSchedulerRuns() {
    let start = scheduler.now
    let timeline = Timeline(subject.receive(on: scheduler), on: scheduler)
    subject.send(1)
    subject.send(2)
    #expect(timeline.events == [])
    scheduler.advance(to: start.advanced(by: .milliseconds(40)))
    subject.send(3)
    subject.send(completion: .finished)
    scheduler.advance()
    #expect(timeline.events == ["0ms 1", "0ms 2", "40ms 3", "40ms finished"])
  }

  @Test func failureIsForwardedThroughTheScheduler() {
    let timeline = Timeline(subject.receive(on: scheduler), on: scheduler)
    subject.send(completion: .failure(.boom))
    #expect(timeline.events == [])
    scheduler.advance()
    #expect(timeline.events == ["0ms failure"])
  }

  @Test func cancelDropsScheduledValues() {
    let timeline = Timeline(subject.receive(on: scheduler), on: scheduler)
    subject.send(1)
    timeline.cancel()
    scheduler.advance()
    #expect(timeline.events == [])
    #expect(subject.subscriberCount == 0)
  }

  @Test func deliversOnADispatchQueueInOrder() async {
    let queue = DispatchQueue(label: "ReceiveOnTests")
    let source = PassthroughSubject<Int, Never>()
    let received = Mutex<[Int]>([])
    let cancellable = Mutex<AnyCancellable?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let subscription = source.receive(on: queue).sink(
        receiveCompletion: { _ in continuation.resume() },
        receiveValue: { value in
          dispatchPrecondition(condition: .onQueue(queue))
          received.withLock { $0.append(value) }
        })
      cancellable.withLock { $0 = subscription }
      (0..<1_000).forEach(source.send)
      source.send(completion: .finished)
    }
    #expect(received.withLock { $0 } == Array(0..<1_000))
  }

  @Test func aConcurrentQueueStillCallsTheSubscriberOneAtATime() async {
    let queue = DispatchQueue(label: "ReceiveOnTests.concurrent", attributes: .concurrent)
    let source = PassthroughSubject<Int, Never>()
    let received = Counter()
    let overlaps = Counter()
    let inside = Atomic(false)
    let cancellable = Mutex<AnyCancellable?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let subscription = source.receive(on: queue).sink { _ in
        if inside.exchange(true, ordering: .acquiring) { overlaps.increment() }
        // Stay inside a little, so that a second concurrent call would be seen.
        for _ in 0..<100 where inside.load(ordering: .relaxed) == false { overlaps.increment() }
        inside.store(false, ordering: .releasing)
        // The last value may overtake others on a concurrent queue: count, then finish.
        received.increment()
        if received.value == 2_000 { continuation.resume() }
      }
      cancellable.withLock { $0 = subscription }
      (0..<2_000).forEach(source.send)
    }
    #expect(overlaps.value == 0)
  }

  @Test func keepsThePublisherContract() {
    let scheduler = TestScheduler()
    checkOperatorContract(settle: { scheduler.advance() }) { $0.receive(on: scheduler) }
  }
}
