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

  typealias NeverInner = PassthroughSubject<String, Never>

  /// An inner publisher that fails for a negative value and republishes any other value.
  static func justOrFail(_ value: Int) -> AnyPublisher<Int, ContractError> {
    value < 0
      ? Fail(error: .boom).eraseToAnyPublisher()
      : Just(value).setFailureType(to: ContractError.self).eraseToAnyPublisher()
  }

  // MARK: An upstream that cannot fail, inner publishers that can

  @Test func aNeverFailingUpstreamTakesTheInnerFailureTypeAndKeepsOnlyTheLatest() {
    let upstream = PassthroughSubject<Inner, Never>()
    let switched:
      Publishers.SwitchToLatest<
        Inner, Publishers.SetFailureType<PassthroughSubject<Inner, Never>, ContractError>
      > = upstream.switchToLatest()
    let recorder = RecordingSubscriber<String, ContractError>()
    switched.subscribe(recorder)
    upstream.send(first)
    first.send("1a")
    first.send("1b")
    upstream.send(second)
    first.send("1c")
    second.send("2a")
    #expect(recorder.values == ["1a", "1b", "2a"])
    #expect(first.subscriberCount == 0)
  }

  @Test func anInnerFailureOverANeverFailingUpstreamIsForwardedAndCancelsTheUpstream() {
    let upstream = PassthroughSubject<Inner, Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    first.send("1a")
    first.send(completion: .failure(.boom))
    upstream.send(second)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.failure(.boom))])
    #expect(upstream.subscriberCount == 0)
    #expect(second.subscriberCount == 0)
  }

  @Test func overANeverFailingUpstreamFinishesWhenTheUpstreamAndTheCurrentInnerHaveFinished() {
    let upstream = PassthroughSubject<Inner, Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    upstream.send(completion: .finished)
    first.send("1a")
    #expect(recorder.completions.isEmpty)
    first.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func cancelCancelsANeverFailingUpstreamAndTheInner() {
    let upstream = PassthroughSubject<Inner, Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    recorder.cancel()
    #expect(upstream.subscriberCount == 0 && first.subscriberCount == 0)
  }

  @Test func keepsThePublisherContractOverANeverFailingUpstream() {
    checkContract {
      let upstream = PassthroughSubject<Int, Never>()
      return ContractRig(
        publisher: upstream.map { Self.justOrFail($0) }.switchToLatest(),
        send: { upstream.send($0) }, finish: { upstream.send(completion: .finished) },
        fail: { upstream.send(-1) })
    }
  }

  // MARK: An upstream that can fail, inner publishers that cannot

  @Test func neverFailingInnersTakeTheUpstreamFailureTypeAndOnlyTheLatestIsKept() {
    let upstream = PassthroughSubject<NeverInner, ContractError>()
    let first = NeverInner()
    let second = NeverInner()
    let switched:
      Publishers.SwitchToLatest<
        Publishers.SetFailureType<NeverInner, ContractError>,
        Publishers.Map<
          PassthroughSubject<NeverInner, ContractError>,
          Publishers.SetFailureType<NeverInner, ContractError>
        >
      > = upstream.switchToLatest()
    let recorder = RecordingSubscriber<String, ContractError>()
    switched.subscribe(recorder)
    upstream.send(first)
    first.send("1a")
    upstream.send(second)
    first.send("1b")
    second.send("2a")
    #expect(recorder.values == ["1a", "2a"])
    #expect(first.subscriberCount == 0 && second.subscriberCount == 1)
  }

  @Test func anUpstreamFailureIsForwardedAndCancelsTheNeverFailingInner() {
    let upstream = PassthroughSubject<NeverInner, ContractError>()
    let first = NeverInner()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    first.send("1a")
    upstream.send(completion: .failure(.boom))
    first.send("1b")
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.failure(.boom))])
    #expect(first.subscriberCount == 0)
  }

  @Test func overNeverFailingInnersFinishesWhenTheUpstreamAndTheCurrentInnerHaveFinished() {
    let upstream = PassthroughSubject<NeverInner, ContractError>()
    let first = NeverInner()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    first.send(completion: .finished)
    #expect(recorder.completions.isEmpty)
    let second = NeverInner()
    upstream.send(second)
    upstream.send(completion: .finished)
    second.send("2a")
    #expect(recorder.completions.isEmpty)
    second.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("2a"), .completion(.finished)])
  }

  @Test func cancelCancelsTheUpstreamAndTheNeverFailingInner() {
    let upstream = PassthroughSubject<NeverInner, ContractError>()
    let first = NeverInner()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.switchToLatest().subscribe(recorder)
    upstream.send(first)
    recorder.cancel()
    #expect(upstream.subscriberCount == 0 && first.subscriberCount == 0)
  }

  @Test func keepsThePublisherContractWithNeverFailingInners() {
    checkOperatorContract { upstream in upstream.map { Just($0) }.switchToLatest() }
  }

  // MARK: Nothing can fail

  @Test func whenNothingCanFailTheTypesStayUnchanged() {
    let upstream = PassthroughSubject<NeverInner, Never>()
    let first = NeverInner()
    let switched: Publishers.SwitchToLatest<NeverInner, PassthroughSubject<NeverInner, Never>> =
      upstream.switchToLatest()
    let recorder = RecordingSubscriber<String, Never>()
    switched.subscribe(recorder)
    upstream.send(first)
    first.send("1a")
    upstream.send(completion: .finished)
    first.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func keepsThePublisherContractWhenNothingCanFail() {
    checkContract {
      let upstream = PassthroughSubject<Int, Never>()
      return ContractRig(
        publisher: upstream.map { Just($0) }.switchToLatest(), send: { upstream.send($0) },
        finish: { upstream.send(completion: .finished) },
        // A source that cannot fail can only complete by finishing.
        fail: { upstream.send(completion: .finished) })
    }
  }
}
