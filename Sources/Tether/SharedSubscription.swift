/// A handle to a key's watch of external changes, returned from
/// ``SharedReaderKey/subscribe(context:subscriber:)``.
///
/// Tether cancels it exactly once, when the last holder of the key (in its storage scope) is
/// released. By then the reference has made its last `save` call; save and load continuations
/// the key still holds do not keep the reference alive, and resuming them later is harmless.
/// Strategies use the cancel to stop watching and to flush writes they buffered. The cancel
/// closure runs at most once, also if the subscription is released without being cancelled.
public final class SharedSubscription: Sendable {
  private let token: CancelOnce

  /// Creates a subscription that runs `cancel` once when cancelled.
  public init(_ cancel: @escaping @Sendable () -> Void) {
    token = CancelOnce(cancel)
  }

  /// A subscription with nothing to cancel.
  public static var empty: SharedSubscription { SharedSubscription {} }

  /// Cancels the watch. Calling it again has no effect.
  public func cancel() {
    token.cancel()
  }
}
