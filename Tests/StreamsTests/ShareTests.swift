import Streams
import Synchronization
import Testing

@Suite struct ShareTests {
  let upstream = PassthroughSubject<Int, ContractError>()

  @Test func everySubscriberSeesTheValuesOfOneUpstreamSubscription() {
    let subscriptions = Counter()
    let shared = upstream.handleEvents(receiveSubscription: { _ in subscriptions.increment() })
      .share()
    let first = RecordingSubscriber<Int, ContractError>()
    let second = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(first)
    upstream.send(1)
    shared.subscribe(second)
    upstream.send(2)
    #expect(first.values == [1, 2])
    #expect(second.values == [2])
    #expect(subscriptions.value == 1)
    #expect(upstream.subscriberCount == 1)
  }

  @Test func completionReachesEverySubscriberAndLaterOnesAtOnce() {
    let shared = upstream.share()
    let first = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(first)
    upstream.send(completion: .finished)
    let late = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(late)
    #expect(first.events == [.subscription, .completion(.finished)])
    #expect(late.events == [.subscription, .completion(.finished)])
  }

  @Test func failureReachesEverySubscriber() {
    let shared = upstream.share()
    let recorders = (0..<3).map { _ in RecordingSubscriber<Int, ContractError>() }
    recorders.forEach(shared.subscribe)
    upstream.send(completion: .failure(.boom))
    for recorder in recorders {
      #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    }
  }

  @Test func theLastCancelDisconnectsAndTheNextSubscriberReconnects() {
    let shared = upstream.share()
    let first = RecordingSubscriber<Int, ContractError>()
    let second = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(first)
    shared.subscribe(second)
    first.cancel()
    #expect(upstream.subscriberCount == 1)
    upstream.send(1)
    second.cancel()
    #expect(upstream.subscriberCount == 0)
    let third = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(third)
    #expect(upstream.subscriberCount == 1)
    upstream.send(2)
    #expect(first.values == [])
    #expect(second.values == [1])
    #expect(third.values == [2])
  }

  @Test func eachSubscribersDemandIsItsOwn() {
    let shared = upstream.share()
    let limited = RecordingSubscriber<Int, ContractError>(initialDemand: .max(1))
    let unlimited = RecordingSubscriber<Int, ContractError>()
    shared.subscribe(limited)
    shared.subscribe(unlimited)
    (1...3).forEach(upstream.send)
    #expect(limited.values == [1])
    #expect(unlimited.values == [1, 2, 3])
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.share() }
  }
}
