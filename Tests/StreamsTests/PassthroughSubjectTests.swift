import Dispatch
import Streams
import Synchronization
import TestSupport
import Testing

@Suite struct PassthroughSubjectTests {
  @Test func keepsThePublisherContract() {
    checkContract {
      let subject = PassthroughSubject<Int, ContractError>()
      return ContractRig(
        publisher: subject, send: { subject.send($0) },
        finish: { subject.send(completion: .finished) },
        fail: { subject.send(completion: .failure(.boom)) })
    }
  }

  @Test func deliversValuesSentAfterSubscribingInOrder() {
    let subject = PassthroughSubject<Int, Never>()
    subject.send(0)
    let recorder = RecordingSubscriber<Int, Never>()
    subject.subscribe(recorder)
    (1...3).forEach(subject.send)
    subject.send(completion: .finished)
    #expect(
      recorder.events == [.subscription, .value(1), .value(2), .value(3), .completion(.finished)])
  }

  @Test func lateSubscriberGetsTheCompletionAtOnce() {
    let subject = PassthroughSubject<Int, ContractError>()
    subject.send(completion: .failure(.boom))
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }

  @Test func cancelledSubscriberIsRemoved() {
    let subject = PassthroughSubject<Int, Never>()
    let cancellable = subject.sink { _ in }
    #expect(subject.subscriberCount == 1)
    cancellable.cancel()
    #expect(subject.subscriberCount == 0)
  }

  @Test func eightThreadsSendingReachEverySinkExactly() async {
    let subject = PassthroughSubject<Int, Never>()
    let counts = (0..<3).map { _ in Counter() }
    let cancellables = counts.indices.map { index in
      subject.sink { [counts] _ in counts[index].increment() }
    }
    await concurrentlyOnDedicatedThreads(iterations: 8) { thread in
      for value in 0..<100_000 { subject.send(thread &* 100_000 &+ value) }
    }
    for count in counts { #expect(count.value == 800_000) }
    withExtendedLifetime(cancellables) {}
  }

  @Test func everySubscriberSeesTheSameOrderWhileThreadsSend() async {
    let subject = PassthroughSubject<Int, Never>()
    let recorders = (0..<3).map { _ in RecordingSubscriber<Int, Never>() }
    recorders.forEach(subject.subscribe)
    await concurrentlyOnDedicatedThreads(iterations: 4) { thread in
      for value in 0..<2_000 { subject.send(thread * 10_000 + value) }
    }
    #expect(recorders[0].values.count == 8_000)
    #expect(recorders[1].values == recorders[0].values)
    #expect(recorders[2].values == recorders[0].values)
  }

  @Test func reentrantSendIsQueuedBehindTheCurrentValue() {
    let subject = PassthroughSubject<Int, Never>()
    let first = RecordingSubscriber<Int, Never>(onValue: { _, value in
      if value < 100 { subject.send(value + 100) }
    })
    let others = (0..<2).map { _ in RecordingSubscriber<Int, Never>() }
    subject.subscribe(first)
    others.forEach(subject.subscribe)
    (0..<3).forEach(subject.send)
    let expected = [0, 100, 1, 101, 2, 102]
    #expect(first.values == expected)
    for other in others { #expect(other.values == expected) }
  }

  @Test func sinkThatSubscribesReentrantlyStartsWithTheNextValue() {
    let subject = PassthroughSubject<Int, Never>()
    let late = RecordingSubscriber<Int, Never>()
    let subscribed = Atomic<Bool>(false)
    let cancellable = subject.sink { _ in
      if !subscribed.exchange(true, ordering: .relaxed) { subject.subscribe(late) }
    }
    (0..<3).forEach(subject.send)
    #expect(late.values == [1, 2])
    withExtendedLifetime(cancellable) {}
  }

  @Test func subjectSubscribedToAPublisherRepublishesIt() {
    let source = PassthroughSubject<Int, Never>()
    let relay = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    relay.subscribe(recorder)
    let link = source.subscribe(relay)
    source.send(1)
    link.cancel()
    source.send(2)
    #expect(recorder.values == [1])
  }

  @Test func subscribersComingAndGoingWhileThreadsSendKeepTheContract() async {
    let subject = PassthroughSubject<Int, Never>()
    await concurrentlyOnDedicatedThreads(iterations: 4) { thread in
      for round in 0..<200 {
        let recorder = RecordingSubscriber<Int, Never>()
        subject.subscribe(recorder)
        subject.send(thread * 1_000 + round)
        recorder.cancel()
        // A value sent after cancel() returned never arrives. (One sent before may still be
        // in flight on another thread's delivery.)
        let late = -(thread * 1_000 + round) - 1
        subject.send(late)
        let events = recorder.events
        #expect(!recorder.values.contains(late), "nothing sent after cancel() arrives")
        if let first = events.first, case .subscription = first {
        } else if !events.isEmpty {
          Issue.record("the subscription must come first: \(events.prefix(2))")
        }
      }
    }
    #expect(subject.subscriberCount == 0)
  }
}
