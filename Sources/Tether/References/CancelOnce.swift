import Streams
import TetherSupport

/// A cancel action that runs at most once: on the first ``cancel()``, whichever thread calls
/// it, or when the token is released without being cancelled.
///
/// Tether's one cancel-once token: subscriptions (`SharedSubscription`), file watches
/// (`FileWatcher`), throttle timers (`FileStorageClock`) and other modules' watches hold one.
/// The action runs outside the token's lock, so it may call back into its owner.
///
/// ```swift
/// let watch = CancelOnce { backend.remove(id: id) }
/// watch.cancel()   // runs the action
/// watch.cancel()   // does nothing
/// ```
package final class CancelOnce: Sendable {
  private let action: Lock<(@Sendable () -> Void)?>

  /// Creates a token that runs `action` once, when cancelled or released.
  package init(_ action: @escaping @Sendable () -> Void) {
    self.action = Lock(action)
  }

  /// A token with nothing to run (already cancelled).
  package init() {
    action = Lock(nil)
  }

  /// Whether the token was cancelled (its action has run or is running).
  package var isCancelled: Bool { action.withLock { $0 == nil } }

  /// Runs the action if no call ran it before; later calls do nothing.
  package func cancel() {
    let action = action.withLock { action in
      defer { action = nil }
      return action
    }
    action?()
  }

  deinit { cancel() }
}
