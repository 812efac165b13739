import Dispatch
import Synchronization

/// The continuations suspended on some owner's state, kept inside that owner's lock (`LockedState`).
///
/// The owner's lock guards both its data (lines, an exit status) and its waiters, so
/// "is the value here, else register" is one atomic step. Continuations are always resumed
/// after the lock is released.
struct Waiters<Value: Sendable>: Sendable {
  private var entries: [(id: UInt64, continuation: CheckedContinuation<Value, any Error>)] = []
  private var cancelledBeforeRegistering: Set<UInt64> = []
  private var nextID: UInt64 = 0

  var isEmpty: Bool { entries.isEmpty }

  mutating func makeID() -> UInt64 {
    nextID += 1
    return nextID
  }

  /// Stores `continuation`, or hands it back when its task was already cancelled.
  mutating func add(
    _ continuation: CheckedContinuation<Value, any Error>, id: UInt64
  ) -> CheckedContinuation<Value, any Error>? {
    if cancelledBeforeRegistering.remove(id) != nil { return continuation }
    entries.append((id, continuation))
    return nil
  }

  /// Removes the waiter with `id` (its deadline passed).
  mutating func remove(id: UInt64) -> CheckedContinuation<Value, any Error>? {
    guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
    return entries.remove(at: index).continuation
  }

  /// Removes the waiter with `id` because its task was cancelled; remembers the cancellation
  /// when the waiter has not registered yet.
  mutating func cancel(id: UInt64) -> CheckedContinuation<Value, any Error>? {
    if let continuation = remove(id: id) { return continuation }
    cancelledBeforeRegistering.insert(id)
    return nil
  }

  /// Removes the oldest waiter.
  mutating func removeFirst() -> CheckedContinuation<Value, any Error>? {
    entries.isEmpty ? nil : entries.removeFirst().continuation
  }

  /// Removes every waiter.
  mutating func removeAll() -> [CheckedContinuation<Value, any Error>] {
    defer { entries.removeAll() }
    return entries.map(\.continuation)
  }
}

/// Suspends the current task until the owner resumes it, `timeout` passes or the task is
/// cancelled.
///
/// - Parameters:
///   - id: From the owner's `Waiters.makeID()`.
///   - timeout: `nil` waits without a limit.
///   - register: Under the owner's lock, resolves at once or stores the continuation with
///     `Waiters.add`; it resumes any continuation `add` hands back with `CancellationError`.
///   - remove: Under the owner's lock, `Waiters.remove(id:)` (`cancelling: false`) or
///     `Waiters.cancel(id:)` (`cancelling: true`).
///   - timeoutError: Builds the error for a passed deadline, with the owner's latest context.
func suspendWithDeadline<Value: Sendable>(
  id: UInt64,
  timeout: Duration?,
  register: (CheckedContinuation<Value, any Error>) -> Void,
  remove: @escaping @Sendable (_ cancelling: Bool) -> CheckedContinuation<Value, any Error>?,
  timeoutError: @escaping @Sendable () -> any Error
) async throws -> Value {
  try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in
      register(continuation)
      if let timeout {
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) {
          remove(false)?.resume(throwing: timeoutError())
        }
      }
    }
  } onCancel: {
    remove(true)?.resume(throwing: CancellationError())
  }
}

extension Duration {
  /// The duration as a Dispatch interval, rounded to nanoseconds.
  var dispatchInterval: DispatchTimeInterval {
    let (seconds, attoseconds) = components
    let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if nanoseconds.overflow { return .never }
    return .nanoseconds(Int(clamping: nanoseconds.partialValue + attoseconds / 1_000_000_000))
  }
}

/// Suspends for `duration` on a Dispatch timer, or less when the task is cancelled.
///
/// Internal machinery for `waitUntil` and `withTimeout`; tests never call it.
func pauseWithoutSleeping(_ duration: Duration) async {
  await DispatchPause().run(for: duration)
}

/// A one-off timer that a task can await; it ends early when the task is cancelled.
private final class DispatchPause: Sendable {
  private let waiters = LockedState(Waiters<Void>())

  func run(for duration: Duration) async {
    let id = waiters.withLock { $0.makeID() }
    // The timer's "timeout" is the normal end of the pause, so its error is ignored.
    _ = try? await suspendWithDeadline(
      id: id, timeout: duration,
      register: { continuation in
        let cancelled = waiters.withLock { $0.add(continuation, id: id) }
        cancelled?.resume(throwing: CancellationError())
      },
      remove: { cancelling in
        self.waiters.withLock { cancelling ? $0.cancel(id: id) : $0.remove(id: id) }
      },
      timeoutError: { CancellationError() })
  }
}
