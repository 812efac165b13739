import Streams
import Testing

@Suite struct CombineLatestTests {
  let a = PassthroughSubject<Int, ContractError>()
  let b = PassthroughSubject<String, ContractError>()

  /// Records `combineLatest` output as `"1a"`-style strings.
  func record(
    initialDemand: Subscribers.Demand = .unlimited
  ) -> RecordingSubscriber<
    String, ContractError
  > {
    let recorder = RecordingSubscriber<String, ContractError>(initialDemand: initialDemand)
    a.combineLatest(b) { "\($0)\($1)" }.subscribe(recorder)
    return recorder
  }

  @Test func publishesTheLatestPairOnceBothHaveAValue() {
    let recorder = record()
    a.send(1)
    a.send(2)
    #expect(recorder.values == [])
    b.send("a")
    a.send(3)
    b.send("b")
    #expect(recorder.values == ["2a", "3a", "3b"])
  }

  @Test func combinesThreePublishers() {
    let c = PassthroughSubject<Bool, ContractError>()
    let recorder = RecordingSubscriber<String, ContractError>()
    a.combineLatest(b, c) { "\($0)\($1)\($2)" }.subscribe(recorder)
    a.send(1)
    b.send("x")
    c.send(true)
    a.send(2)
    #expect(recorder.values == ["1xtrue", "2xtrue"])
  }

  @Test func finishesWhenBothHaveFinished() {
    let recorder = record()
    a.send(1)
    b.send("a")
    a.send(completion: .finished)
    b.send("b")
    #expect(recorder.completions.isEmpty)
    b.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .value("1b"), .completion(.finished)])
  }

  @Test func finishesAtOnceWhenAnUpstreamFinishesWithoutAValue() {
    let recorder = record()
    a.send(1)
    b.send(completion: .finished)
    #expect(recorder.events == [.subscription, .completion(.finished)])
    #expect(a.subscriberCount == 0)
  }

  @Test func aFailureIsForwardedAndCancelsTheOtherUpstream() {
    let recorder = record()
    a.send(1)
    b.send("a")
    a.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.failure(.boom))])
    #expect(b.subscriberCount == 0)
  }

  @Test func cancelCancelsBothUpstreams() {
    let recorder = record()
    #expect(a.subscriberCount == 1 && b.subscriberCount == 1)
    recorder.cancel()
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0)
  }

  @Test func withoutDemandTheNewestPairWaitsForTheNextRequest() {
    let recorder = record(initialDemand: .max(1))
    a.send(1)
    b.send("a")
    a.send(2)
    a.send(3)
    #expect(recorder.values == ["1a"])
    recorder.request(.max(1))
    #expect(recorder.values == ["1a", "3a"])
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.combineLatest(Just(0).setFailureType(to: ContractError.self)) { $0 + $1 }
    }
  }
}
