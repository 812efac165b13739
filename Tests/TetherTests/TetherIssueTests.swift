import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

/// A key whose load continuation the test resumes, from wherever it likes.
private struct HandOverKey: SharedReaderKey, CustomStringConvertible {
  let id: String
  let handOver: @Sendable (LoadContinuation<Int>) -> Void
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    handOver(continuation)
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { .empty }
  var description: String { "HandOverKey(\(id))" }
}

@Suite(.isolatedSharedState)
struct TetherIssueTests {
  @Test func aReportNamesTheKeyAndTheLineOfTheMisuse() throws {
    let issues = TetherIssueRecorder()
    let lineBefore = Lock(0)
    _ = issues.record {
      SharedReader(
        wrappedValue: 0,
        HandOverKey(id: "located") { continuation in
          continuation.resume(returning: 1)
          lineBefore.withLock { $0 = #line }
          continuation.resume(returning: 2)
        })
    }
    let expectedLine = lineBefore.withLock { $0 } + 1
    let issue = try #require(issues.issues.first)
    #expect(issues.issues.count == 1)
    #expect(issue.key?.contains("located") == true)
    #expect(issue.fileID == #fileID)
    #expect(issue.line == expectedLine)
    #expect(issue.message.contains("more than once"))
    #expect("\(issue)".hasPrefix("\(#fileID):\(expectedLine): "))
  }

  @Test func aMisuseInsideAnIsolatedTestFailsThatTest() {
    withKnownIssue {
      _ = SharedReader(wrappedValue: 0, DoubleResumingKey())
    } matching: { issue in
      "\(issue)".contains("more than once") && "\(issue)".contains("DoubleResumingKey")
    }
  }

  @Test func aMisuseReportedFromAnotherThreadFailsTheTestWhenItEnds() async throws {
    let test = try #require(Test.current)
    try await withKnownIssue {
      try await IsolatedSharedStateTrait().provideScope(for: test, testCase: nil) {
        let held = Lock<LoadContinuation<Int>?>(nil)
        let value = SharedReader(
          wrappedValue: 0,
          HandOverKey(id: "late") { continuation in
            held.withLock { $0 = continuation }
          })
        // Resume twice from a detached task: no test context there.
        await Task.detached {
          let continuation = held.withLock { $0 }
          continuation?.resume(returning: 3)
          continuation?.resume(returning: 4)
        }.value
        #expect(value.wrappedValue == 3)
      }
    } matching: { issue in
      "\(issue)".contains("late") && "\(issue)".contains("more than once")
    }
  }

  @Test func theHandlerRoutesReportsToTheUsersLogger() {
    let logged = Lock<[TetherIssue]>([])
    let previous = TetherIssue.handler
    TetherIssue.handler = { issue in
      guard issue.key?.contains("routed") == true else { return }
      logged.withLock { $0.append(issue) }
    }
    defer { TetherIssue.handler = previous }
    TetherIssueRecorder().record {
      _ = SharedReader(
        wrappedValue: 0,
        HandOverKey(id: "routed") { continuation in
          continuation.resume(returning: 1); continuation.resume(returning: 2)
        })
    }
    #expect(logged.withLock { $0.count } == 1)
    #expect(logged.withLock { $0.first?.message.contains("more than once") } == true)
  }
}
