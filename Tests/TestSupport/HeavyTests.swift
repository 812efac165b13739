import Synchronization
import Testing

/// Runs the tests it marks one at a time, across every suite and test target of the run.
///
/// Some tests load the machine on purpose: four or five processes racing on one file, two
/// threads spinning while two processes play ping-pong, the compiler type-checking a snippet,
/// a child process filling its memory. On a two-core machine several of them at once leave the
/// hundreds of other tests, which run in parallel, so little CPU that their deadlines expire
/// for no fault of theirs. Marked with `.heavy`, such tests take turns, while the light ones
/// keep running beside whichever heavy test holds the turn.
///
/// ```swift
/// @Suite(.heavy) struct FileStorageCrossProcessTests { … }
/// ```
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
  /// A suite's mark covers every test in it, including nested suites.
  public var isRecursive: Bool { true }

  /// Scopes each test case (never the suite as a whole: its tests take turns one by one).
  public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
    testCase == nil ? nil : self
  }

  /// Waits for the turn, runs the test, and passes the turn on.
  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    // A test marked heavy inside a heavy suite gets two scopes; the inner one runs inside
    // the turn the outer one holds (waiting for it again would wait forever).
    if HeavyTurn.isHeld {
      try await function()
      return
    }
    await HeavyTurn.shared.acquire()
    defer { HeavyTurn.shared.release() }
    try await HeavyTurn.$isHeld.withValue(true) { try await function() }
  }
}

extension Trait where Self == HeavyTestTrait {
  /// Runs the marked test (or every test of the marked suite) while no other heavy test runs.
  public static var heavy: Self { HeavyTestTrait() }
}

/// One turn, handed over in the order it was asked for.
final class HeavyTurn: Sendable {
  static let shared = HeavyTurn()

  /// Whether the current task runs inside the turn.
  @TaskLocal static var isHeld = false

  private struct State {
    var taken = false
    var waiting: [CheckedContinuation<Void, Never>] = []
  }
  private let state = LockedState(State())

  func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let granted = state.withLock { state -> Bool in
        if state.taken {
          state.waiting.append(continuation)
          return false
        }
        state.taken = true
        return true
      }
      if granted { continuation.resume() }
    }
  }

  func release() {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      guard !state.waiting.isEmpty else {
        state.taken = false
        return nil
      }
      return state.waiting.removeFirst()
    }
    next?.resume()
  }
}
