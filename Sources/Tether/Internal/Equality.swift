/// `==` for a value type that is `Equatable` only at run time.
protocol RuntimeEquality<Value>: Sendable {
  associatedtype Value
  func isEqual(_ lhs: Value, _ rhs: Value) -> Bool
}

/// Returns `==` for `Value` if it is `Equatable` at run time, `nil` otherwise.
///
/// Looked up once per reference; the comparison itself does no dynamic cast.
func runtimeEquality<Value>(_: Value.Type) -> (any RuntimeEquality<Value>)? {
  guard let equatable = Value.self as? any Equatable.Type else { return nil }
  return equality(opening: equatable, as: Value.self)
}

private func equality<E: Equatable, Value>(
  opening _: E.Type, as _: Value.Type
)
  -> any RuntimeEquality<Value>
{
  OpenedEquality<E, Value>()
}

private struct OpenedEquality<E: Equatable, Value>: RuntimeEquality {
  func isEqual(_ lhs: Value, _ rhs: Value) -> Bool {
    // `E` and `Value` are the same type at run time, so reinterpreting is exact.
    unsafeBitCast(lhs, to: E.self) == unsafeBitCast(rhs, to: E.self)
  }
}

/// A key path that can cross threads. Key paths are immutable, and the ones Tether stores
/// (formed by `@dynamicMemberLookup` or literals) capture no state.
struct SendableKeyPath<Root, Value>: @unchecked Sendable {
  let keyPath: KeyPath<Root, Value>
}
