import Streams
import Testing

@Suite struct SetFailureTypeTests {
  @Test func keepsThePublisherContract() {
    checkContract {
      let subject = PassthroughSubject<Int, Never>()
      return ContractRig(
        publisher: subject.setFailureType(to: ContractError.self), send: { subject.send($0) },
        finish: { subject.send(completion: .finished) },
        fail: { subject.send(completion: .finished) })
    }
  }

  @Test func retypesAndForwards() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    Just(1).setFailureType(to: ContractError.self).subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(1), .completion(.finished)])
  }
}
