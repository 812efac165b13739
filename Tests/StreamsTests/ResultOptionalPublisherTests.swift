import Streams
import Testing

@Suite struct ResultPublisherTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Result<Int, ContractError>.success(7).publisher) }
    checkContract { ContractRig(publisher: Result<Int, ContractError>.failure(.boom).publisher) }
  }

  @Test func aSuccessArrivesOnDemandThenFinishes() {
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .none)
    Result<Int, ContractError>.success(7).publisher.subscribe(recorder)
    #expect(recorder.events == [.subscription])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }

  @Test func aFailureArrivesAtOnce() {
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .none)
    Result<Int, ContractError>.Publisher(.boom).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }
}

@Suite struct OptionalPublisherTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Optional(7).publisher) }
    checkContract { ContractRig(publisher: Int?.none.publisher) }
  }

  @Test func aValueArrivesOnDemandThenFinishes() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    Optional(7).publisher.subscribe(recorder)
    #expect(recorder.events == [.subscription])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }

  @Test func nilOnlyFinishes() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    Optional<Int>.Publisher(nil).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }
}
