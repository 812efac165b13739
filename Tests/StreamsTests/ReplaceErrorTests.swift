import Streams
import Testing

@Suite struct ReplaceErrorTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.replaceError(with: -1) }
  }

  @Test func replacesTheFailureWithAValueThenFinishes() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.replaceError(with: 0).subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .value(1), .value(0), .completion(.finished)])
  }

  @Test func replacementWaitsForDemand() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
    subject.replaceError(with: 0).subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.values == [1])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(1), .value(0), .completion(.finished)])
  }
}
