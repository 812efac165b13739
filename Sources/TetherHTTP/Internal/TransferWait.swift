/// Suspends the calling task until `start` resumes the continuation it is handed, and calls
/// `onCancel` if the task is cancelled meanwhile (at once, if it already was).
///
/// Both transports wait for their exchanges this way. A transfer fails only with an
/// `HTTPError`; anything else the continuation is resumed with counts as a cancellation.
@inline(__always)
package func waitForTransfer<T: Sendable>(
  _ start: (CheckedContinuation<T, any Error>) -> Void,
  onCancel: @Sendable () -> Void
) async throws(HTTPError) -> T {
  do {
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation(start)
    } onCancel: {
      onCancel()
    }
  } catch let error as HTTPError {
    throw error
  } catch {
    throw .cancelled
  }
}
