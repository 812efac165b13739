import Streams
import Testing

@Suite struct JustTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Just(7)) }
  }

  @Test func emitsOnDemandThenFinishes() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    Just(7).subscribe(recorder)
    #expect(recorder.events == [.subscription])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }
}
