import Streams
import Testing

@Suite struct ZipTests {
  let a = PassthroughSubject<Int, ContractError>()
  let b = PassthroughSubject<String, ContractError>()

  func record(
    initialDemand: Subscribers.Demand = .unlimited
  ) -> RecordingSubscriber<
    String, ContractError
  > {
    let recorder = RecordingSubscriber<String, ContractError>(initialDemand: initialDemand)
    a.zip(b) { "\($0)\($1)" }.subscribe(recorder)
    return recorder
  }

  @Test func pairsValuesByPosition() {
    let recorder = record()
    a.send(1)
    a.send(2)
    a.send(3)
    b.send("a")
    #expect(recorder.values == ["1a"])
    b.send("b")
    b.send("c")
    b.send("d")
    a.send(4)
    #expect(recorder.values == ["1a", "2b", "3c", "4d"])
  }

  @Test func zipsThreePublishers() {
    let c = PassthroughSubject<Bool, ContractError>()
    let recorder = RecordingSubscriber<String, ContractError>()
    a.zip(b, c) { "\($0)\($1)\($2)" }.subscribe(recorder)
    a.send(1)
    b.send("x")
    a.send(2)
    c.send(true)
    c.send(false)
    b.send("y")
    #expect(recorder.values == ["1xtrue", "2yfalse"])
  }

  @Test func finishesWhenAFinishedUpstreamHasNothingLeftToPair() {
    let recorder = record()
    a.send(1)
    a.send(2)
    a.send(completion: .finished)
    b.send("a")
    #expect(recorder.completions.isEmpty)
    b.send("b")
    #expect(recorder.events == [.subscription, .value("1a"), .value("2b"), .completion(.finished)])
    #expect(b.subscriberCount == 0)
  }

  @Test func aFailureIsForwardedAtOnceAndCancelsTheOtherUpstream() {
    let recorder = record()
    a.send(1)
    b.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(a.subscriberCount == 0)
  }

  @Test func cancelCancelsBothUpstreams() {
    let recorder = record()
    recorder.cancel()
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0)
  }

  @Test func demandGoesToEveryUpstreamAndLimitsThePairs() {
    let recorder = RecordingSubscriber<String, Never>(initialDemand: .max(2))
    (1...5).publisher.zip(["a", "b", "c"].publisher) { "\($0)\($1)" }.subscribe(recorder)
    #expect(recorder.values == ["1a", "2b"])
    recorder.request(.max(5))
    #expect(
      recorder.events == [
        .subscription, .value("1a"), .value("2b"), .value("3c"), .completion(.finished),
      ])
  }

  @Test func aLongBacklogIsPairedInOrder() {
    // Far more values wait on one side than the buffer keeps before compacting itself.
    let recorder = RecordingSubscriber<Int, ContractError>()
    let c = PassthroughSubject<Int, ContractError>()
    let d = PassthroughSubject<Int, ContractError>()
    c.zip(d) { $0 * 1_000 + $1 }.subscribe(recorder)
    for value in 0..<200 { c.send(value) }
    for value in 0..<150 { d.send(value) }
    for value in 200..<300 { c.send(value) }
    for value in 150..<300 { d.send(value) }
    #expect(recorder.values == (0..<300).map { $0 * 1_000 + $0 })
  }

  @Test func anUpstreamSubscribedAfterTheRequestIsAskedForTheOpenDemand() {
    let late = Deferred { Just("z").setFailureType(to: ContractError.self) }
    let recorder = RecordingSubscriber<String, ContractError>(initialDemand: .max(1))
    a.zip(late) { "\($0)\($1)" }.subscribe(recorder)
    a.send(1)
    #expect(recorder.events == [.subscription, .value("1z"), .completion(.finished)])
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.zip((0..<1_000).publisher.setFailureType(to: ContractError.self)) { $0 + $1 }
    }
  }

  // MARK: Four publishers

  let c = PassthroughSubject<Bool, ContractError>()
  let d = PassthroughSubject<Int, ContractError>()

  /// Records `zip` of `a`, `b`, `c` and `d` as `"1atrue7"`-style strings.
  func recordFour() -> RecordingSubscriber<String, ContractError> {
    let recorder = RecordingSubscriber<String, ContractError>()
    a.zip(b, c, d) { "\($0)\($1)\($2)\($3)" }.subscribe(recorder)
    return recorder
  }

  @Test func zipsFourPublishersByPosition() {
    let recorder = recordFour()
    a.send(1)
    a.send(2)
    b.send("x")
    c.send(true)
    #expect(recorder.values == [])
    d.send(7)
    d.send(8)
    c.send(false)
    b.send("y")
    #expect(recorder.values == ["1xtrue7", "2yfalse8"])
  }

  @Test func theFourPublisherFormPublishesTuples() {
    let zipped:
      Publishers.Zip4<
        PassthroughSubject<Int, ContractError>, PassthroughSubject<String, ContractError>,
        PassthroughSubject<Bool, ContractError>, PassthroughSubject<Int, ContractError>
      > = a.zip(b, c, d)
    let recorder = RecordingSubscriber<String, ContractError>()
    zipped.map { "\($0.0)\($0.1)\($0.2)\($0.3)" }.subscribe(recorder)
    d.send(7)
    c.send(true)
    b.send("x")
    a.send(1)
    a.send(2)
    #expect(recorder.values == ["1xtrue7"])
  }

  @Test func fourPublishersFinishWhenAFinishedUpstreamHasNothingLeftToPair() {
    let recorder = recordFour()
    d.send(7)
    d.send(completion: .finished)
    a.send(1)
    b.send("x")
    #expect(recorder.completions.isEmpty)
    c.send(true)
    #expect(recorder.events == [.subscription, .value("1xtrue7"), .completion(.finished)])
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0 && c.subscriberCount == 0)
  }

  @Test func aFailureOfOneOfFourIsForwardedAtOnceAndCancelsTheOtherThree() {
    let recorder = recordFour()
    a.send(1)
    b.send("x")
    d.send(completion: .failure(.boom))
    c.send(true)
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0 && c.subscriberCount == 0)
  }

  @Test func cancelCancelsAllFourUpstreams() {
    let recorder = recordFour()
    #expect(a.subscriberCount == 1 && d.subscriberCount == 1)
    recorder.cancel()
    #expect(a.subscriberCount == 0 && b.subscriberCount == 0)
    #expect(c.subscriberCount == 0 && d.subscriberCount == 0)
  }

  @Test func demandGoesToAllFourUpstreamsAndLimitsTheGroups() {
    let recorder = RecordingSubscriber<String, Never>(initialDemand: .max(2))
    (1...5).publisher
      .zip(["a", "b", "c"].publisher, (10...20).publisher, [true, false, true].publisher) {
        "\($0)\($1)\($2)\($3)"
      }
      .subscribe(recorder)
    #expect(recorder.values == ["1a10true", "2b11false"])
    recorder.request(.max(5))
    #expect(
      recorder.events == [
        .subscription, .value("1a10true"), .value("2b11false"), .value("3c12true"),
        .completion(.finished),
      ])
  }

  @Test func keepsThePublisherContractWithFourPublishers() {
    checkOperatorContract { upstream in
      upstream.zip(
        (0..<1_000).publisher.setFailureType(to: ContractError.self),
        (0..<1_000).publisher.setFailureType(to: ContractError.self),
        (0..<1_000).publisher.setFailureType(to: ContractError.self)
      ) { $0 + $1 + $2 + $3 }
    }
  }
}
