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

  @Test func anUpstreamFinishingWithoutAValueStillWaitsForTheOther() {
    // As in Combine: no tuple can ever come, but the result finishes only with the last
    // upstream.
    let recorder = record()
    a.send(1)
    b.send(completion: .finished)
    #expect(recorder.events == [.subscription])
    #expect(a.subscriberCount == 1)
    a.send(completion: .finished)
    #expect(recorder.events == [.subscription, .completion(.finished)])
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

  @Test func demandFromTheSubscriberLimitsWhatTheUpstreamsSend() {
    // The subscriber's .max(1) goes to each subject, so the subject drops 2 and 3 (it has no
    // demand left for them); after the next request, "b" pairs with the latest value, 1.
    let recorder = record(initialDemand: .max(1))
    a.send(1)
    b.send("a")
    a.send(2)
    a.send(3)
    recorder.request(.max(1))
    #expect(recorder.values == ["1a"])
    b.send("b")
    #expect(recorder.values == ["1a", "1b"])
  }

  @Test func demandGoesToEveryUpstream() {
    let recorder = RecordingSubscriber<String, Never>(initialDemand: .max(2))
    (1...5).publisher.combineLatest(["a"].publisher) { "\($0)\($1)" }.subscribe(recorder)
    // The first upstream delivers 1 and 2 (its demand) before the second has a value; then
    // "a" makes the one tuple the subscriber can take.
    #expect(recorder.values == ["2a"])
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.combineLatest(Just(0).setFailureType(to: ContractError.self)) { $0 + $1 }
    }
  }
}
