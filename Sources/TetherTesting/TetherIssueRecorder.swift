import Streams
import Synchronization
import Tether
import TetherSupport

/// Collects the programmer errors Tether reports, so a test can assert on them.
///
/// Tether reports misuse (a key's continuation resumed twice or never, a key shared with two
/// value types) instead of crashing. Reports made by objects created inside ``record(_:)``
/// reach the recorder, even if they happen later on another thread. They are expected: under
/// `.isolatedSharedState` they do not fail the test.
///
/// ```swift
/// let issues = TetherIssueRecorder()
/// issues.record { @Shared(DoubleResumingKey()) var value = 0 }
/// #expect(issues.messages.contains { $0.contains("more than once") })
/// ```
public final class TetherIssueRecorder: Sendable {
  private let recorded = Lock<[TetherIssue]>([])

  /// Creates an empty recorder.
  public init() {}

  /// The reports so far, oldest first, with the key and source location each names.
  public var issues: [TetherIssue] { recorded.withLock { $0 } }

  /// The messages of the reports so far, oldest first.
  public var messages: [String] { issues.map(\.message) }

  /// Runs `operation`, recording what Tether reports for objects it creates.
  public func record<R>(_ operation: () throws -> R) rethrows -> R {
    try IssueReporting.$recorder.withValue(observe, operation: operation)
  }

  /// Runs the asynchronous `operation`, recording what Tether reports for objects it creates.
  public func record<R>(
    isolation: isolated (any Actor)? = #isolation, _ operation: () async throws -> R
  ) async rethrows -> R {
    try await IssueReporting.$recorder.withValue(
      observe, operation: operation, isolation: isolation)
  }

  private var observe: IssueReporting.Recorder {
    { [self] issue in recorded.withLock { $0.append(issue) } }
  }
}
