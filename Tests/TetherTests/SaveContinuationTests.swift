import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// A key whose save resumes twice, or never, depending on `mode`: programmer errors.
struct MisbehavingSaveKey: SharedKey {
  enum Mode: Sendable { case twice, never }
  let mode: Mode
  var id: String { "misbehaving-\(mode)" }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resumeReturningInitialValue()
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { .empty }
  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    switch mode {
    case .twice:
      continuation.resume()
      continuation.resume(throwing: TestKeyError("late"))
    case .never: break
    }
  }
}

@Suite(.isolatedSharedState)
struct SaveContinuationTests {
  @Test func resumingTwiceIsReportedAndTheFirstResultWins() {
    let issues = TetherIssueRecorder()
    let value = issues.record { Shared(wrappedValue: 0, MisbehavingSaveKey(mode: .twice)) }
    value.withLock { $0 = 1 }
    #expect(issues.messages.count == 1)
    #expect(issues.messages.first?.contains("more than once") == true)
    #expect(value.saveError == nil)
  }

  @Test func neverResumingIsReportedAndCountsAsAFailedSave() async {
    let issues = TetherIssueRecorder()
    let value = issues.record { Shared(wrappedValue: 0, MisbehavingSaveKey(mode: .never)) }
    value.withLock { $0 = 1 }
    #expect(issues.messages.count == 1)
    #expect(issues.messages.first?.contains("never resumed") == true)
    #expect(value.saveError != nil)
    #expect(value.wrappedValue == 1)
  }

  @Test func aContinuationCreatedByATestReportsItsResult() {
    let failed = Lock(false)
    let continuation = SaveContinuation { result in
      if case .failure = result { failed.withLock { $0 = true } }
    }
    continuation.resume(throwing: TestKeyError("x"))
    #expect(failed.withLock { $0 })
  }
}
