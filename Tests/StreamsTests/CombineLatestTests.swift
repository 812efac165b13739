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

  // MARK: Four publishers

  let c = PassthroughSubject<Bool, ContractError>()
  let d = PassthroughSubject<Int, ContractError>()

  /// Records `combineLatest` of `a`, `b`, `c` and `d` as `"1atrue7"`-style strings.
  func recordFour(
    initialDemand: Subscribers.Demand = .unlimited
  ) -> RecordingSubscriber<String, ContractError> {
    let recorder = RecordingSubscriber<String, ContractError>(initialDemand: initialDemand)
    a.combineLatest(b, c, d) { "\($0)\($1)\($2)\($3)" }.subscribe(recorder)
    return recorder
  }

  @Test func combinesFourPublishersOnceAllHaveAValue() {
    let recorder = recordFour()
    a.send(1)
    b.send("a")
    c.send(true)
    a.send(2)
    #expect(recorder.values == [])
    d.send(7)
    c.send(false)
    b.send("b")
    d.send(8)
    #expect(recorder.values == ["2atrue7", "2afalse7", "2bfalse7", "2bfalse8"])
  }

  @Test func theFourPublisherFormPublishesTuples() {
    let combined:
      Publishers.CombineLatest4<
        PassthroughSubject<Int, ContractError>, PassthroughSubject<String, ContractError>,
        PassthroughSubject<Bool, ContractError>, PassthroughSubject<Int, ContractError>
      > = a.combineLatest(b, c, d)
    let recorder = RecordingSubscriber<String, ContractError>()
    combined.map { "\($0.0)\($0.1)\($0.2)\($0.3)" }.subscribe(recorder)
    d.send(7)
    c.send(true)
    b.send("a")
    a.send(1)
    a.send(2)
    #expect(recorder.values == ["1atrue7", "2atrue7"])
  }

  @Test func fourPublishersFinishWhenAllFourHaveFinished() {
    let recorder = recordFour()
    a.send(1)
    b.send("a")
    c.send(true)
    d.send(7)
    a.send(completion: .finished)
    b.send(completion: .finished)
    c.send(completion: .finished)
    d.send(8)
    #expect(recorder.completions.isEmpty)
    d.send(completion: .finished)
    #expect(
      recorder.events == [
        .subscription, .value("1atrue7"), .value("1atrue8"), .completion(.finished),
      ])
  }

  @Test func aFailureOfOneOfFourIsForwardedAndCancelsTheOtherThree() {
    let recorder = recordFour()
    a.send(1)
    b.send("a")
    c.send(true)
    d.send(7)
    c.send(completion: .failure(.boom))
    d.send(8)
    #expect(recorder.events == [.subscription, .value("1atrue7"), .completion(.failure(.boom))])
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0 && d.subscriberCount == 0)
  }

  @Test func cancelCancelsAllFourUpstreams() {
    let recorder = recordFour()
    #expect(a.subscriberCount == 1 && d.subscriberCount == 1)
    recorder.cancel()
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0)
    #expect(c.subscriberCount == 0 && d.subscriberCount == 0)
  }

  @Test func demandGoesToAllFourUpstreams() {
    let recorder = RecordingSubscriber<String, Never>(initialDemand: .max(2))
    (1...5).publisher
      .combineLatest(["a"].publisher, [true].publisher, [7, 8, 9].publisher) {
        "\($0)\($1)\($2)\($3)"
      }
      .subscribe(recorder)
    // The first upstream delivers 1 and 2 (its demand) before the others have a value; the
    // fourth's 7 and 8 then make the two tuples the subscriber asked for, and 9 waits.
    #expect(recorder.values == ["2atrue7", "2atrue8"])
  }

  @Test func keepsThePublisherContractWithFourPublishers() {
    checkOperatorContract { upstream in
      upstream.combineLatest(
        Just(1).setFailureType(to: ContractError.self),
        Just(2).setFailureType(to: ContractError.self),
        Just(3).setFailureType(to: ContractError.self)
      ) { $0 + $1 + $2 + $3 }
    }
  }
}
