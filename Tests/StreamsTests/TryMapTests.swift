import Streams
import Testing

@Suite struct TryMapTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.tryMap { $0 * 2 } }
  }

  @Test func thrownErrorFailsTheStreamAndCancelsUpstream() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, any Error>()
    subject.tryMap { value in
      if value == 2 { throw ContractError.boom }
      return value * 10
    }.subscribe(recorder)
    (1...3).forEach(subject.send)
    #expect(recorder.values == [10])
    #expect(recorder.completions.count == 1)
    if case .failure(let error) = recorder.completions.first {
      #expect(error as? ContractError == .boom)
    } else {
      Issue.record("expected a failure")
    }
    #expect(subject.subscriberCount == 0)
  }
}
