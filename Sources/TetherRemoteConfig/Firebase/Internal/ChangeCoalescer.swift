import Streams
import Tether
import TetherSupport

/// Turns a flood of change announcements into at most one `onChange` call per `interval`: the
/// first announcement after a quiet interval calls at once, and any number arriving within the
/// interval after a call become one more call at its end. A realtime stream that sends change
/// events without end therefore costs one pending call, never one task (and one fetch) per
/// event.
///
/// ```swift
/// let coalescer = ChangeCoalescer(interval: .milliseconds(500)) { config.sourceDidChange() }
/// for event in stream { coalescer.changed() }  // 20,000 events → a handful of calls
/// ```
///
/// Safe from any thread; `onChange` is called without the lock held, from the announcing
/// thread (the leading call) or from one task (the trailing call).
final class ChangeCoalescer: Sendable {
  private struct State {
    /// When `onChange` was last called.
    var lastCall: ContinuousClock.Instant?
    /// Whether a trailing call is scheduled (announcements meanwhile join it).
    var scheduled = false
  }

  private let interval: Duration
  private let onChange: @Sendable () -> Void
  private let state = Lock(State())
  private let pending = Lock<Task<Void, Never>?>(nil)

  init(interval: Duration, onChange: @escaping @Sendable () -> Void) {
    self.interval = interval
    self.onChange = onChange
  }

  /// Announces one change.
  func changed() {
    let now = ContinuousClock.now
    let wait = state.withLock { state -> Duration? in
      if state.scheduled { return nil }
      if let last = state.lastCall, now - last < interval {
        state.scheduled = true
        return interval - (now - last)
      }
      state.lastCall = now
      return .zero
    }
    guard let wait else { return }
    guard wait > .zero else {
      onChange()
      return
    }
    let trailing = Task { [self] in
      do {
        try await Task.sleep(for: wait)
      } catch {
        state.withLock { $0.scheduled = false }
        return
      }
      state.withLock { state in
        state.scheduled = false
        state.lastCall = .now
      }
      onChange()
    }
    pending.withLock { $0 = trailing }
  }

  /// Drops a scheduled trailing call (the stream was cancelled).
  func cancel() {
    pending.withLock { $0 }?.cancel()
  }
}
