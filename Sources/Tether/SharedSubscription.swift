import Synchronization

/// A handle to a key's watch of external changes, returned from
/// ``SharedReaderKey/subscribe(context:subscriber:)``.
///
/// Tether cancels it when the last holder of the key goes away. The cancel closure runs at
/// most once.
public final class SharedSubscription: Sendable {
  private let onCancel: Lock<(@Sendable () -> Void)?>

  /// Creates a subscription that runs `cancel` once when cancelled.
  public init(_ cancel: @escaping @Sendable () -> Void) {
    onCancel = Lock(cancel)
  }

  /// A subscription with nothing to cancel.
  public static var empty: SharedSubscription { SharedSubscription {} }

  /// Cancels the watch. Calling it again has no effect.
  public func cancel() {
    let action = onCancel.withLock { action in
      defer { action = nil }
      return action
    }
    action?()
  }

  deinit { cancel() }
}
