import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// A key that resumes its load continuation twice: a programmer error Tether must report.
struct DoubleResumingKey: SharedReaderKey {
  let id = "double"
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resume(returning: 1)
    continuation.resume(returning: 2)
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { .empty }
}

/// A key that drops its load continuation without resuming it: a programmer error.
struct ForgetfulKey: SharedReaderKey {
  let id = "forgetful"
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {}
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { .empty }
}

@Suite(.isolatedSharedState)
struct LoadContinuationTests {
  @Test func resumingTwiceIsReportedAndTheFirstResultWins() {
    let issues = TetherIssueRecorder()
    let value = issues.record { SharedReader(wrappedValue: 0, DoubleResumingKey()) }
    #expect(value.wrappedValue == 1)
    #expect(issues.messages.count == 1)
    #expect(issues.messages.first?.contains("more than once") == true)
  }

  @Test func neverResumingIsReportedAndEndsTheLoadWithAnError() {
    let issues = TetherIssueRecorder()
    let value = issues.record { SharedReader(wrappedValue: 5, ForgetfulKey()) }
    #expect(issues.messages.count == 1)
    #expect(issues.messages.first?.contains("never resumed") == true)
    #expect(value.wrappedValue == 5)
    #expect(!value.isLoading)
    #expect(value.loadError != nil)
  }

  @Test func aContinuationCreatedByATestReportsItsResult() throws {
    let result = Lock<Result<Int?, any Error>?>(nil)
    let continuation = LoadContinuation<Int> { outcome in result.withLock { $0 = outcome } }
    continuation.resumeReturningInitialValue()
    #expect(try result.withLock { try $0?.get() } == .some(nil))
  }
}
