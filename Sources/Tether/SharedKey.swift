/// A type that describes where a shared value lives and how to load, watch and save it.
///
/// Conform to this protocol to teach ``Shared`` a new storage strategy.
public protocol SharedKey<Value>: SharedReaderKey {
  /// Saves `value` and resumes `continuation` exactly once, synchronously or later from
  /// any thread.
  ///
  /// Tether calls this outside of any lock, in mutation order for one reference.
  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation)
}
