// Conformances a swift-sharing user expects of `Shared` and `SharedReader`: equality and
// identity by value, and descriptions that show the value.

extension Shared: Equatable where Value: Equatable {
  /// Whether the two values are equal now (by value, not by key): a `struct State: Equatable`
  /// holding `@Shared` properties compares its current values.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.wrappedValue == rhs.wrappedValue
  }
}

extension Shared: Identifiable where Value: Identifiable {
  /// The current value's id.
  public var id: Value.ID { wrappedValue.id }
}

extension Shared: CustomStringConvertible {
  /// The current value's description.
  public var description: String { String(describing: wrappedValue) }
}

extension Shared: CustomReflectable {
  /// The current value's mirror, so `dump` and debuggers show the value.
  public var customMirror: Mirror { Mirror(reflecting: wrappedValue) }
}

extension SharedReader: Equatable where Value: Equatable {
  /// Whether the two values are equal now (by value, not by key).
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.wrappedValue == rhs.wrappedValue
  }
}

extension SharedReader: Identifiable where Value: Identifiable {
  /// The current value's id.
  public var id: Value.ID { wrappedValue.id }
}

extension SharedReader: CustomStringConvertible {
  /// The current value's description.
  public var description: String { String(describing: wrappedValue) }
}

extension SharedReader: CustomReflectable {
  /// The current value's mirror, so `dump` and debuggers show the value.
  public var customMirror: Mirror { Mirror(reflecting: wrappedValue) }
}
