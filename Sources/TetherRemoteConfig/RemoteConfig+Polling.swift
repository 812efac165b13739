import Foundation
import Streams
import TetherHTTP

extension RemoteConfig {
  /// Fetches and activates every `interval`, for realtime updates.
  ///
  /// Polls ignore ``RemoteConfigSettings/minimumFetchInterval``. With ``HTTPConfigSource`` an
  /// unchanged document costs one conditional request (304) and no decoding. After a failure
  /// the next poll waits longer: a random wait up to the interval doubled per consecutive
  /// failure (capped at ``RemoteConfigSettings/maximumBackoff``), never shorter than the
  /// server's `Retry-After`; the first success returns to `interval`. A 401 or 403 stops
  /// polling with ``RemoteConfigError/unauthorized(status:)`` in ``lastError``.
  ///
  /// Every failed poll is published on ``fetchErrorPublisher`` (and kept in ``lastError``), so a
  /// server can log it or raise an alert.
  ///
  /// Calling it again replaces the previous polling.
  public func startPolling(every interval: Duration) {
    let seconds = max(
      0.001, Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18)
    // The task is recorded under the lock it needs before its first poll can end it: a poll
    // answered 401 within microseconds must not find the polling not yet recorded, and then be
    // recorded as running for good.
    let previous = state.withLock { state -> Task<Void, Never>? in
      let previous = state.polling
      state.pollingGeneration += 1
      let generation = state.pollingGeneration
      state.polling = Task { [weak self] in
        while !Task.isCancelled {
          guard let delay = await self?.pollOnce(interval: seconds, generation: generation)
          else { return }
          do {
            try await Task.sleep(for: .seconds(delay))
          } catch {
            return
          }
        }
      }
      return previous
    }
    previous?.cancel()
  }

  /// Each failed fetch as it happens, from ``fetch()``, ``fetchAndActivate()``, polling and
  /// source change notifications; ``lastError`` holds the latest.
  ///
  /// ```swift
  /// let failures = config.fetchErrorPublisher.sink { error in logger.warning("\(error)") }
  /// ```
  public var fetchErrorPublisher: AnyPublisher<RemoteConfigError, Never> {
    fetchErrorSubject.eraseToAnyPublisher()
  }

  /// Stops polling. A fetch already running finishes.
  public func stopPolling() {
    let task = state.withLock { state in
      defer { state.polling = nil }
      return state.polling
    }
    task?.cancel()
  }

  /// One poll: fetch and activate. Returns the wait before the next poll, or `nil` to stop.
  private func pollOnce(interval: Double, generation: Int) async -> Double? {
    let result = await fetch(ignoringInterval: true)
    if case .success = result { await activate() }
    return state.withLock { state -> Double? in
      if case .failure(.unauthorized) = result {
        // Only this loop's polling: a newer `startPolling` keeps running.
        if state.pollingGeneration == generation { state.polling = nil }
        return nil
      }
      if Task.isCancelled { return nil }
      // The poll interval when healthy; after failures, a wait between the interval and
      // `interval * 2^failures` (capped at `maximumBackoff`), never shorter than the server's
      // `Retry-After`, itself never beyond the cap.
      let cap = max(state.settings.maximumBackoff, interval)
      let backoff = Backoff(
        initial: clamped(min(interval * 2, cap)), maximum: clamped(cap),
        minimum: clamped(interval), jitter: state.settings.backoffJitter ? .full : .none)
      let retryAfter = state.retryNotBefore.map { clamped($0.timeIntervalSinceNow) }
      let wait = backoff.delay(afterFailures: state.consecutiveFailures, retryAfter: retryAfter)
      return wait.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
    }
  }
}

/// `seconds` as a `Duration`, clamped to `0...1e9` s so that no setting or header can trap.
private func clamped(_ seconds: Double) -> Duration {
  .milliseconds(Int64((seconds.isFinite ? min(max(0, seconds), 1e9) : 0) * 1000))
}
