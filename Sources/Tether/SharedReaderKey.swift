/// A type that describes where a read-only shared value lives and how to load and watch it.
///
/// Conform to this protocol to teach ``SharedReader`` a new storage strategy. Tether calls
/// ``load(context:continuation:)`` when a reference is created and when a holder calls
/// `load()`, and ``subscribe(context:subscriber:)`` once per live reference to hear about
/// external changes.
public protocol SharedReaderKey<Value>: Sendable {
  /// The type of value this key loads.
  associatedtype Value: Sendable
  /// The identity of the stored value: keys with equal ids share one reference.
  ///
  /// It only has to be `Hashable` (a ported swift-sharing key's non-`Sendable` id struct
  /// works): Tether hashes and compares ids only under its registry's lock.
  associatedtype ID: Hashable = Self

  /// The identity of the stored value. Every holder of a key with the same `id` (and the
  /// same key type) in one storage scope shares one reference.
  var id: ID { get }

  /// Loads the stored value and resumes `continuation` exactly once, synchronously or later
  /// from any thread.
  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>)

  /// Starts watching the stored value for external changes, reporting them to `subscriber`.
  ///
  /// - Returns: A subscription that Tether cancels when the last holder of the key goes away.
  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  )
    -> SharedSubscription
}

extension SharedReaderKey where ID == Self {
  /// A key whose identity is the key itself.
  public var id: ID { self }
}
