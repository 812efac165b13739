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

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.zip((0..<1_000).publisher.setFailureType(to: ContractError.self)) { $0 + $1 }
    }
  }
}
