import Streams
import Testing

@Suite struct AssertNoFailureTests {
  // The failing path stops the process, so only the passing path is tested here.
  @Test func keepsThePublisherContractWhileNothingFails() {
    checkContract {
      let upstream = PassthroughSubject<Int, ContractError>()
      let finish = { upstream.send(completion: .finished) }
      // A failure would stop the process: the rig's failure finishes instead.
      return ContractRig(
        publisher: upstream.assertNoFailure(), send: { upstream.send($0) }, finish: finish,
        fail: finish)
    }
  }

  @Test func republishesElementsAndTheCompletion() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2].publisher.setFailureType(to: ContractError.self).assertNoFailure().subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(1), .value(2), .completion(.finished)])
  }
}
