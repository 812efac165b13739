import Streams
import Testing

@Suite struct MapTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.map { $0 * 2 } }
  }

  @Test func transformsEachValueAndForwardsCompletion() {
    let recorder = RecordingSubscriber<String, Never>()
    [1, 2, 3].publisher.map { "#\($0)" }.subscribe(recorder)
    #expect(
      recorder.events == [
        .subscription, .value("#1"), .value("#2"), .value("#3"), .completion(.finished),
      ])
  }

  @Test func forwardsFailure() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.map { $0 + 1 }.subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .value(2), .completion(.failure(.boom))])
  }
}
