/// The receiver a key reports external changes to from ``SharedReaderKey/subscribe(context:subscriber:)``.
///
/// Methods may be called from any thread.
public struct SharedSubscriber<Value: Sendable>: Sendable {
  /// An event a key reports.
  public enum Event: Sendable {
    /// The stored value changed to this value.
    case value(Value)
    /// The stored value was deleted; holders return to their declared default.
    case initialValue
    /// Watching failed; holders keep their value and set `loadError`.
    case failure(any Error)
    /// The key started (`true`) or finished (`false`) loading.
    case loading(Bool)
  }

  let callback: @Sendable (Event, SharedVersion?) -> Void
  /// For a reference's subscriber: where a key reports a write of its own that landed
  /// (``yieldOwnWrite(version:)``).
  let ownWrite: (@Sendable (SharedVersion) -> Void)?

  /// Creates a subscriber that reports events to `callback`.
  public init(_ callback: @escaping @Sendable (Event) -> Void) {
    self.init(versioned: { event, _ in callback(event) })
  }

  /// A subscriber whose callback also gets the version the key handed over with a value.
  init(
    versioned callback: @escaping @Sendable (Event, SharedVersion?) -> Void,
    ownWrite: (@Sendable (SharedVersion) -> Void)? = nil
  ) {
    self.callback = callback
    self.ownWrite = ownWrite
  }

  /// Creates a subscriber from swift-sharing's callbacks, so a ported key's tests compile
  /// unchanged: `callback` gets each value (`nil` for "back to the initial value") or error,
  /// `onLoading` each loading state.
  public init(
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void,
    onLoading: @escaping @Sendable (Bool) -> Void = { _ in }
  ) {
    self.init { event in
      switch event {
      case .value(let value): callback(.success(value))
      case .initialValue: callback(.success(nil))
      case .failure(let error): callback(.failure(error))
      case .loading(let isLoading): onLoading(isLoading)
      }
    }
  }

  /// Reports a new stored value; holders take it without saving it back.
  public func yield(_ value: Value) { callback(.value(value), nil) }
  /// Reports a new stored value at `version` (see ``SharedVersion``): holders take both, and
  /// saves derived from this value receive `version` in ``SaveContinuation/version``.
  public func yield(_ value: Value, version: SharedVersion?) { callback(.value(value), version) }
  /// Reports a failure; holders keep their value and set `loadError`.
  public func yield(throwing error: any Error) { callback(.failure(error), nil) }
  /// Reports that the stored value was deleted; holders return to their declared default.
  public func yieldReturningInitialValue() { callback(.initialValue, nil) }
  /// Reports that the stored value was deleted, at `version` (the version of "absent").
  public func yieldReturningInitialValue(version: SharedVersion?) {
    callback(.initialValue, version)
  }
  /// Reports that a write of the key's own, made for this subscriber's holders but answered by
  /// no continuation (one whose outcome was unknown, landing late), is stored at `version`. The
  /// holders keep their value (they have it, or a newer change of theirs): their next save is
  /// conditional on `version`, and a delivery of it is not taken as someone else's change.
  package func yieldOwnWrite(version: SharedVersion) { ownWrite?(version) }
  /// Reports whether the key is loading.
  public func yieldLoading(_ isLoading: Bool = true) { callback(.loading(isLoading), nil) }
  /// Reports a value, `nil` for the initial value, or an error.
  public func yield(with result: Result<Value?, any Error>) {
    switch result {
    case .success(let value?): yield(value)
    case .success(nil): yieldReturningInitialValue()
    case .failure(let error): yield(throwing: error)
    }
  }
}
