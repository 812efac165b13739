import Streams
import Testing

@Suite struct CatchTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.catch { _ in Just(-1) } }
  }

  @Test func switchesToTheReplacementWithTheOutstandingDemand() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(3))
    subject.catch { _ in [10, 11, 12].publisher }.subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.values == [1, 10, 11])
    recorder.request(.max(5))
    #expect(recorder.events.suffix(2) == [.value(12), .completion(.finished)])
  }

  @Test func finishedUpstreamNeverCallsTheHandler() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    Just(1).setFailureType(to: ContractError.self)
      .catch { _ -> Fail<Int, ContractError> in
        Issue.record("handler must not run")
        return Fail(error: .boom)
      }
      .subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(1), .completion(.finished)])
  }

  @Test func cancelReachesTheReplacement() {
    let subject = PassthroughSubject<Int, ContractError>()
    let replacement = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.catch { _ in replacement }.subscribe(recorder)
    subject.send(completion: .failure(.boom))
    #expect(replacement.subscriberCount == 1)
    recorder.cancel()
    #expect(replacement.subscriberCount == 0)
  }
}
