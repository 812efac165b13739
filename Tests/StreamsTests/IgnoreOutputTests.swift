import Streams
import Testing

@Suite struct IgnoreOutputTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.ignoreOutput() }
  }

  @Test func republishesOnlyTheCompletionWithoutDemand() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Never, ContractError>(initialDemand: .none)
    subject.ignoreOutput().subscribe(recorder)
    [1, 2].forEach(subject.send)
    subject.send(completion: .failure(.boom))
    #expect(recorder.completions == [.failure(.boom)])
    #expect(recorder.events.count == 2)
  }
}
