import Synchronization
import TetherSupport

/// Where a subscriber or an operator's subscription stands with its upstream.
@usableFromInline
enum SubscriptionStatus {
  /// No subscription has arrived yet.
  case awaiting
  /// Subscribed; the upstream subscription is kept for `request` and `cancel`.
  case subscribed(any Subscription)
  /// Completed or cancelled: nothing more is forwarded, and a late subscription is cancelled.
  case terminal
}

/// The upstream end of a subscriber or operator, guarded by a `Lock` mutex so that `request`,
/// `cancel` and completion may race from different threads.
///
/// Every method changes the status under the lock and calls the upstream subscription after
/// releasing it.
@usableFromInline
typealias UpstreamLink = Lock<SubscriptionStatus>

extension Lock where State == SubscriptionStatus {
  /// Creates a link that waits for its subscription.
  @inlinable init() { self.init(.awaiting) }

  /// Keeps the subscription if none arrived before; otherwise cancels it.
  ///
  /// - Returns: Whether the subscription was kept.
  @inlinable func attach(_ subscription: any Subscription) -> Bool {
    let kept = withLock { status in
      guard case .awaiting = status else { return false }
      status = .subscribed(subscription)
      return true
    }
    if !kept { subscription.cancel() }
    return kept
  }

  /// Forwards a request upstream while subscribed.
  @inlinable func request(_ demand: Subscribers.Demand) {
    guard demand > 0, let subscription = current else { return }
    subscription.request(demand)
  }

  /// The upstream subscription while subscribed.
  @inlinable var current: (any Subscription)? {
    withLock { status in
      guard case .subscribed(let subscription) = status else { return nil }
      return subscription
    }
  }

  /// Whether the link has completed or been cancelled.
  @inlinable var isTerminal: Bool {
    withLock { status in
      if case .terminal = status { return true }
      return false
    }
  }

  /// Marks the link terminal without cancelling upstream (upstream completed).
  ///
  /// - Returns: Whether the link was live, so the caller forwards the completion only once.
  @inlinable func finish() -> Bool {
    take() != nil
  }

  /// Marks the link terminal and cancels the upstream subscription, once.
  @inlinable func cancel() {
    if case .some(.some(let subscription)) = take() { subscription.cancel() }
  }

  /// Marks the link terminal; returns the subscription while it was live.
  ///
  /// A link still awaiting its subscription becomes terminal too (the late subscription is
  /// then cancelled), and that counts as live: the result is `Optional.some(nil)`.
  @discardableResult
  @inlinable func take() -> (any Subscription)?? {
    withLock { status in
      defer { status = .terminal }
      switch status {
      case .awaiting: return .some(nil)
      case .subscribed(let subscription): return .some(subscription)
      case .terminal: return nil
      }
    }
  }
}
