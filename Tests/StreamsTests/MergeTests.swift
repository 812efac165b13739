import Dispatch
import Streams
import Synchronization
import TestSupport
import Testing

@Suite struct MergeTests {
  let a = PassthroughSubject<Int, ContractError>()
  let b = PassthroughSubject<Int, ContractError>()

  @Test func deliversValuesFromBothUpstreamsInArrivalOrder() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    a.merge(with: b).subscribe(recorder)
    a.send(1)
    b.send(2)
    a.send(3)
    b.send(4)
    #expect(recorder.values == [1, 2, 3, 4])
  }

  @Test func finishesOnlyWhenEveryUpstreamHasFinished() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    a.merge(with: b).subscribe(recorder)
    a.send(1)
    a.send(completion: .finished)
    b.send(2)
    #expect(recorder.completions.isEmpty)
    b.send(completion: .finished)
    #expect(
      recorder.events == [.subscription, .value(1), .value(2), .completion(.finished)])
  }

  @Test func aFailureIsForwardedAtOnceAndCancelsTheOtherUpstream() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    a.merge(with: b).subscribe(recorder)
    a.send(1)
    b.send(completion: .failure(.boom))
    #expect(a.subscriberCount == 0)
    a.send(2)
    #expect(recorder.events == [.subscription, .value(1), .completion(.failure(.boom))])
  }

  @Test func cancelCancelsEveryUpstream() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    a.merge(with: b).subscribe(recorder)
    #expect(a.subscriberCount == 1 && b.subscriberCount == 1)
    recorder.cancel()
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0)
  }

  @Test func valuesBeyondDemandWaitUntilTheSubscriberAsks() {
    // Each `Just` delivers its value on the first request, so asking for one value gets three:
    // the merge must hold two of them back.
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
    Publishers.MergeMany(Just(1), Just(2), Just(3)).subscribe(recorder)
    #expect(recorder.values == [1])
    recorder.request(.max(1))
    #expect(recorder.values == [1, 2])
    recorder.request(.max(5))
    #expect(
      recorder.events == [.subscription, .value(1), .value(2), .value(3), .completion(.finished)])
  }

  @Test func mergesManyPublishersOfOneType() {
    let c = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    a.merge(with: b, c).subscribe(recorder)
    c.send(3)
    b.send(2)
    a.send(1)
    [a, b, c].forEach { $0.send(completion: .finished) }
    #expect(
      recorder.events == [.subscription, .value(3), .value(2), .value(1), .completion(.finished)])
  }

  @Test func mergeManyGrowsWithMergeWith() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    let merged: Publishers.MergeMany<PassthroughSubject<Int, ContractError>> =
      Publishers.MergeMany(a).merge(with: b)
    merged.subscribe(recorder)
    b.send(2)
    a.send(1)
    #expect(recorder.values == [2, 1])
  }

  @Test func mergingNothingFinishesAtOnce() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    Publishers.MergeMany<PassthroughSubject<Int, ContractError>>([]).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }

  @Test func threadsSendingIntoBothUpstreamsReachTheSubscriberOneCallAtATime() async {
    let a = PassthroughSubject<Int, Never>()
    let b = PassthroughSubject<Int, Never>()
    let received = Counter()
    let overlaps = Counter()
    let inside = Atomic(false)
    let cancellable = a.merge(with: b).sink { _ in
      if inside.exchange(true, ordering: .acquiring) { overlaps.increment() }
      // Stay inside a little, so that a second concurrent call would be seen.
      for _ in 0..<100 where inside.load(ordering: .relaxed) == false { overlaps.increment() }
      received.increment()
      inside.store(false, ordering: .releasing)
    }
    await concurrentlyOnDedicatedThreads(iterations: 4) { thread in
      let subject = thread.isMultiple(of: 2) ? a : b
      for value in 0..<10_000 { subject.send(value) }
    }
    #expect(received.value == 40_000)
    #expect(overlaps.value == 0)
    cancellable.cancel()
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.merge(with: Empty(completeImmediately: false)) }
  }

  @Test func mergeManyKeepsThePublisherContract() {
    checkOperatorContract { upstream in
      Publishers.MergeMany(upstream.eraseToAnyPublisher(), Empty().eraseToAnyPublisher())
    }
  }
}
