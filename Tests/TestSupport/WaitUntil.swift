import Dispatch

/// Waits until `condition` returns `true`, or throws `TimeoutError` when `timeout` passes.
///
/// This is the one sanctioned way for a test to wait for a condition that has no event to
/// await (a counter reaching a value, a file appearing). It checks the condition at once,
/// then again after short pauses that grow from 1 ms to 20 ms, so it reacts quickly without
/// spinning; tests never contain a fixed sleep. When a stream value, a continuation or a
/// process line can be awaited instead, await that.
///
/// ```swift
/// try await waitUntil("three requests", timeout: .seconds(2)) { server.requestCount >= 3 }
/// ```
///
/// - Parameters:
///   - description: What is awaited, for the error message.
///   - timeout: How long to wait before throwing.
///   - condition: Evaluated on the calling task; it may be async and may throw, which ends the
///     wait with that error.
/// - Throws: `TimeoutError`, the condition's error, or `CancellationError` when the task is
///   cancelled.
public func waitUntil(
  _ description: String = "a condition",
  timeout: Duration = Deadline.defaultTimeout,
  _ condition: () async throws -> Bool
) async throws {
  let deadline = Deadline.after(timeout)
  var pause = Duration.milliseconds(1)
  while true {
    if try await condition() { return }
    if deadline.hasPassed {
      throw TimeoutError(waitingFor: description, after: timeout)
    }
    try Task.checkCancellation()
    await pauseWithoutSleeping(min(pause, deadline.remaining))
    pause = min(pause * 2, .milliseconds(20))
  }
}

/// Runs `operation` and throws `TimeoutError` if it has not finished within `timeout`.
///
/// When the deadline passes the operation's task is cancelled, and this function returns once
/// the operation has ended, so the operation must react to cancellation (an `AsyncStream`
/// iteration and TestSupport's own waits do).
///
/// ```swift
/// let first = try await withTimeout(.seconds(2)) { await iterator.next() }
/// ```
public func withTimeout<Result: Sendable>(
  _ timeout: Duration,
  _ description: String = "an operation",
  operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
  try await withThrowingTaskGroup(of: Result?.self) { group in
    group.addTask { try await operation() }
    group.addTask {
      await pauseWithoutSleeping(timeout)
      return nil
    }
    defer { group.cancelAll() }
    guard let first = try await group.next(), let result = first else {
      throw TimeoutError(waitingFor: description, after: timeout)
    }
    return result
  }
}
