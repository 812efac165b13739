/// Why a key is being asked to load or subscribe.
public enum LoadContext<Value: Sendable>: Sendable {
  /// A new reference is being created with this declared default value.
  case initialValue(Value)
  /// A holder asked for a fresh value by calling `load()`.
  case userInitiated

  /// The declared default if this is the initial load, `nil` otherwise.
  public var initialValue: Value? {
    guard case .initialValue(let value) = self else { return nil }
    return value
  }
}
