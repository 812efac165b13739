import Streams
import Testing

@Suite struct FailTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Fail<Int, ContractError>(error: .boom)) }
  }

  @Test func failsAtOnce() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    Fail<Int, ContractError>(error: .boom).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }
}
