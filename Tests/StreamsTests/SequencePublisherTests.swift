import Streams
import Testing

@Suite struct SequencePublisherTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: (0..<10).publisher) }
    checkContract { ContractRig(publisher: [Int]().publisher) }
  }

  @Test func emitsOnDemandThenFinishesWithTheLastValue() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    [1, 2, 3].publisher.subscribe(recorder)
    #expect(recorder.values == [1, 2])
    recorder.request(.max(1))
    #expect(
      recorder.events == [.subscription, .value(1), .value(2), .value(3), .completion(.finished)])
  }

  @Test func reentrantRequestsDoNotRecurse() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(1), demandPerValue: .max(1))
    (0..<100_000).publisher.subscribe(recorder)
    #expect(recorder.values.count == 100_000)
  }
}
