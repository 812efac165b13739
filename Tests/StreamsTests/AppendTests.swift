import Streams
import Testing

@Suite struct AppendTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.append(100, 101) }
  }

  @Test func publishesTheElementsAfterFinishing() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.append([8, 9]).subscribe(recorder)
    subject.send(1)
    subject.send(completion: .finished)
    #expect(
      recorder.events == [.subscription, .value(1), .value(8), .value(9), .completion(.finished)])
  }

  @Test func failureSkipsTheSuffix() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.append(Just(9).setFailureType(to: ContractError.self)).subscribe(recorder)
    subject.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }

  @Test func cancelBeforeTheSuffixNeverSubscribesIt() {
    let subject = PassthroughSubject<Int, Never>()
    let suffix = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.append(suffix).subscribe(recorder)
    recorder.cancel()
    subject.send(completion: .finished)
    #expect(suffix.subscriberCount == 0)
  }
}
