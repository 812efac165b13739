import Testing
import Tether

/// A Swift Testing trait that runs each test in its own, empty shared-storage scope.
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
public struct IsolatedSharedStateTrait: TestTrait, SuiteTrait, TestScoping {
  /// Applied to a suite, the trait applies to every test in it.
  public var isRecursive: Bool { true }

  /// Scopes each test case, not the suite as a whole.
  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    testCase == nil ? nil : self
  }

  /// Runs the test inside `withSharedStorage(.isolated)`.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withSharedStorage(.isolated) {
      try await function()
    }
  }
}

extension Trait where Self == IsolatedSharedStateTrait {
  /// Runs each test in its own, empty shared-storage scope (see `withSharedStorage`).
  public static var isolatedSharedState: Self { Self() }
}
