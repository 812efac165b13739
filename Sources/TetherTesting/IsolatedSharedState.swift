import Streams
import Synchronization
import Testing
import Tether
import TetherSupport

/// A Swift Testing trait that runs each test in its own, empty shared-storage scope, and fails
/// the test when Tether reports a misuse.
///
/// Apply it to a test or a suite; every test (and every argument of a parameterized test)
/// then gets fresh references and in-memory values, so tests can run in parallel with the
/// same keys:
///
/// ```swift
/// @Test(.isolatedSharedState) func counts() {
///   @Shared(.inMemory("count")) var count = 0   // always starts at 0
/// }
/// ```
///
/// File keys (`.fileStorage`) created in the test read and write the scope's in-memory file
/// system (`SharedStorage.current.files`), never the disk: a model that declares
/// `@Shared(.fileStorage(.settingsURL))` leaves the user's real settings file alone. Seed and
/// inspect those files by URL. A test that needs the disk itself opts into real files with
/// `.isolatedSharedState(files: .real)` (and uses paths in a temporary directory).
///
/// Without the trait, a process running tests already keeps `.fileStorage` files and
/// `.appStorage` entries in memory (`SharedStorage.process`), but all its tests share
/// them; the trait gives each test its own.
///
/// Networked keys created in the test stay off the network: `.etcd` keys live on the scope's
/// ``InMemoryEtcd``, and `.remoteConfig` keys on a config made outside the test read
/// ``RemoteConfigTestValues``. Declaring the trait installs these stand-ins for the whole
/// process, so `withSharedStorage(.isolated)` scopes get them too.
///
/// A `TetherIssue` reported for a value created in the test (a key resuming its continuation
/// twice, a key shared with two value types) is recorded as a failure of that test, at the
/// misusing line when Tether knows it. Reports made on another thread are recorded when the
/// test ends. To expect a report instead, use ``TetherIssueRecorder`` or `withKnownIssue`.
public struct IsolatedSharedStateTrait: TestTrait, SuiteTrait, TestScoping {
  /// Where file keys created in the test keep their files: in memory (the default) or on disk.
  public var files: SharedStorage.Files

  /// Creates the trait; tests normally write `.isolatedSharedState` instead.
  public init(files: SharedStorage.Files = .inMemory) {
    self.files = files
    TestingStandIns.install()
  }

  /// Applied to a suite, the trait applies to every test in it.
  public var isRecursive: Bool { true }

  /// Scopes each test case, not the suite as a whole.
  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    testCase == nil ? nil : self
  }

  /// Runs the test inside `withSharedStorage(.isolated)`, failing it on Tether's reports.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    let failures = IssueFailures()
    defer { failures.recordPending() }
    try await IssueReporting.$recorder.withValue(failures.record) {
      try await withSharedStorage(.isolated(files: files)) {
        try await function()
      }
    }
  }
}

extension Trait where Self == IsolatedSharedStateTrait {
  /// Runs each test in its own, empty shared-storage scope (see `withSharedStorage`) and fails
  /// it when Tether reports a misuse.
  public static var isolatedSharedState: Self { Self() }

  /// Runs each test in its own, empty shared-storage scope whose file keys use `files`:
  /// `.inMemory` (what `.isolatedSharedState` does) or `.real` for tests that need the disk.
  public static func isolatedSharedState(files: SharedStorage.Files) -> Self {
    Self(files: files)
  }
}

/// Turns Tether's reports into failures of the test that created the misused object.
///
/// A report on the test's own task is recorded at once (so `withKnownIssue` sees it); one
/// from another thread has no test context, so it waits until the test ends.
private final class IssueFailures: Sendable {
  private let test = Test.current?.id
  private let pending = Lock<[TetherIssue]>([])

  var record: @Sendable (TetherIssue) -> Void {
    { [self] issue in
      if let current = Test.current, current.id == test {
        Self.fail(issue)
      } else {
        pending.withLock { $0.append(issue) }
      }
    }
  }

  func recordPending() {
    for issue in pending.withLock({ pending in
      defer { pending = [] }; return pending
    }) {
      Self.fail(issue)
    }
  }

  private static func fail(_ issue: TetherIssue) {
    let comment = Comment(rawValue: "Tether reported a misuse: \(issue)")
    if let fileID = issue.fileID, fileID.contains("/"), let line = issue.line, line > 0 {
      Issue.record(
        comment,
        sourceLocation: SourceLocation(fileID: fileID, filePath: fileID, line: line, column: 1))
    } else {
      Issue.record(comment)
    }
  }
}
