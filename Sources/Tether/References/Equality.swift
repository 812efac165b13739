/// `==` for a value type that is `Equatable` only at run time.
///
/// It keeps the type as an `Equatable` metatype (two words, opened for each comparison) rather
/// than a boxed witness (five words): every reference stores one.
@usableFromInline
struct RuntimeEquality<Value>: Sendable {
  @usableFromInline let type: any (Equatable & Sendable).Type

  /// `==` for `Value`, or `nil` if it is not `Equatable`. A dynamic cast: look it up once.
  init?(_: Value.Type) {
    guard let type = Value.self as? any (Equatable & Sendable).Type else { return nil }
    self.type = type
  }

  @usableFromInline
  func isEqual(_ lhs: Value, _ rhs: Value) -> Bool {
    // Opened implicitly; Swift opens an existential argument only from a local or parameter.
    let equatable = type
    return areEqual(lhs, rhs, as: equatable)
  }
}

/// `lhs == rhs` for values of type `E` that are statically typed as `Value`.
private func areEqual<Value, E: Equatable & Sendable>(
  _ lhs: Value, _ rhs: Value, as _: E.Type
)
  -> Bool
{
  // `E` and `Value` are the same type at run time, so reinterpreting is exact.
  unsafeBitCast(lhs, to: E.self) == unsafeBitCast(rhs, to: E.self)
}

/// Returns `==` for `Value` if it is `Equatable` at run time, `nil` otherwise.
///
/// Looked up once per reference; the comparison itself does no dynamic cast.
func runtimeEquality<Value>(_: Value.Type) -> RuntimeEquality<Value>? {
  RuntimeEquality(Value.self)
}

/// A key path that can cross threads. Key paths are immutable, and the ones Tether stores
/// (formed by `@dynamicMemberLookup` or literals) capture no state.
struct SendableKeyPath<Root, Value>: @unchecked Sendable {
  let keyPath: KeyPath<Root, Value>
}

/// A writable key path that crosses into `@Sendable` closures, as `SendableKeyPath`.
struct WritableSendableKeyPath<Root, Value>: @unchecked Sendable {
  let keyPath: WritableKeyPath<Root, Value>

  /// The writable form of a key path a derived reference was created with as writable.
  init(_ path: SendableKeyPath<Root, Value>) {
    keyPath = path.keyPath as! WritableKeyPath<Root, Value>
  }
}

/// Whether two values have the same bytes. For plain-data types after specialization this is
/// a few word compares.
@inlinable
func bitwiseEqual<Value>(_ lhs: Value, _ rhs: Value) -> Bool {
  var lhs = lhs
  var rhs = rhs
  return withUnsafeBytes(of: &lhs) { left in
    withUnsafeBytes(of: &rhs) { right in
      var offset = 0
      let size = left.count
      while offset + 8 <= size {
        if left.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
          != right.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
          return false
        }
        offset += 8
      }
      while offset < size {
        if left[offset] != right[offset] { return false }
        offset += 1
      }
      return true
    }
  }
}
