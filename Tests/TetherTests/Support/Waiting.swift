import Foundation

/// Waits for `condition` to become true, yielding between checks, until `timeout` passes.
/// Returns whether it became true. (Waiting for a condition, never for a fixed time.)
@discardableResult
func waitForCondition(
  timeout: Duration = .seconds(30), _ condition: @Sendable () -> Bool
) async -> Bool {
  let deadline = ContinuousClock.now + timeout
  while !condition() {
    if ContinuousClock.now >= deadline { return false }
    await Task.yield()
  }
  return true
}

/// Runs `body` on a new thread (not a Swift concurrency thread, not the main thread) and
/// waits for it to finish.
func onBackgroundThread(_ body: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    let thread = Thread {
      body()
      continuation.resume()
    }
    thread.start()
  }
}
