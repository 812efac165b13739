import Streams
import Testing

@Suite struct SwitchToLatestTests {
  typealias Inner = PassthroughSubject<String, ContractError>
  let upstream = PassthroughSubject<Inner, ContractError>()
  let first = Inner()
  let second = Inner()

  func record() -> RecordingSubscriber<String, ContractError> {
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    return recorder
  }

  @Test func republishesOnlyTheLatestInnerPublisher() {
    let recorder = record()
    upstream.send(first)
    first.send("1a")
    upstream.send(second)
    first.send("1b")
    second.send("2a")
    #expect(recorder.values == ["1a", "2a"])
  }

  @Test func switchingCancelsThePreviousInnerSubscription() {
    _ = record()
    upstream.send(first)
    #expect(first.subscriberCount == 1)
    upstream.send(second)
    #expect(first.subscriberCount == 0)
    #expect(second.subscriberCount == 1)
  }

  @Test func finishesWhenTheUpstreamAndTheCurrentInnerHaveFinished() {
    let recorder = record()
    upstream.send(first)
    upstream.send(completion: .finished)
    first.send("1a")
    #expect(recorder.completions.isEmpty)
    first.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func anInnerFinishingDoesNotFinishWhileTheUpstreamLives() {
    let recorder = record()
    upstream.send(first)
    first.send(completion: .finished)
    upstream.send(second)
    second.send("2a")
    #expect(recorder.events == [.subscription, .value("2a")])
  }

  @Test func aFailureOfTheCurrentInnerIsForwardedAndCancelsTheUpstream() {
    let recorder = record()
    upstream.send(first)
    first.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(upstream.subscriberCount == 0)
  }

  @Test func anUpstreamFailureIsForwardedAndCancelsTheInner() {
    let recorder = record()
    upstream.send(first)
    upstream.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(first.subscriberCount == 0)
  }

  @Test func cancelCancelsTheUpstreamAndTheInner() {
    let recorder = record()
    upstream.send(first)
    recorder.cancel()
    #expect(upstream.subscriberCount == 0 && first.subscriberCount == 0)
  }

  @Test func aNewInnerInheritsTheOutstandingDemand() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(3))
    let outer = PassthroughSubject<Publishers.Sequence<[Int], Never>, Never>()
    outer.switchToLatest().subscribe(recorder)
    outer.send([1, 2].publisher)
    outer.send([3, 4, 5].publisher)
    #expect(recorder.values == [1, 2, 3])
    recorder.request(.max(1))
    #expect(recorder.values == [1, 2, 3, 4])
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.map { Just($0).setFailureType(to: ContractError.self) }.switchToLatest()
    }
  }
}
