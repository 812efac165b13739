import Streams
import Synchronization
import Testing

@Suite struct RetryTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.retry(2) }
  }

  /// A publisher that fails the first `failures` subscriptions after one element, then
  /// publishes `[1, 2, 3]`.
  func flaky(failures: Int, attempts: Counter) -> AnyPublisher<Int, ContractError> {
    Deferred {
      attempts.increment()
      let attempt = attempts.value
      return attempt <= failures
        ? [attempt * 100].publisher.setFailureType(to: ContractError.self)
          .append(Fail(error: .boom)).eraseToAnyPublisher()
        : [1, 2, 3].publisher.setFailureType(to: ContractError.self).eraseToAnyPublisher()
    }.eraseToAnyPublisher()
  }

  @Test func resubscribesAfterAFailure() {
    let attempts = Counter()
    let recorder = RecordingSubscriber<Int, ContractError>()
    flaky(failures: 2, attempts: attempts).retry(2).subscribe(recorder)
    #expect(recorder.values == [100, 200, 1, 2, 3])
    #expect(recorder.completions == [.finished])
    #expect(attempts.value == 3)
  }

  @Test func forwardsTheFailureWhenRetriesRunOut() {
    let attempts = Counter()
    let recorder = RecordingSubscriber<Int, ContractError>()
    flaky(failures: 5, attempts: attempts).retry(1).subscribe(recorder)
    #expect(recorder.values == [100, 200])
    #expect(recorder.completions == [.failure(.boom)])
    #expect(attempts.value == 2)
  }

  @Test func aNewSubscriptionIsAskedOnlyForTheOutstandingDemand() {
    let attempts = Counter()
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .max(3))
    flaky(failures: 1, attempts: attempts).retry(1).subscribe(recorder)
    #expect(recorder.values == [100, 1, 2])
    recorder.request(.max(5))
    #expect(recorder.values == [100, 1, 2, 3])
    #expect(recorder.completions == [.finished])
  }
}
