import Streams

/// A read-only property wrapper for a value shared with every other holder of the same key.
///
/// The read-only twin of ``Shared``: it works with keys that can only load and watch (such
/// as remote configuration) and with read-only views of a `Shared`:
///
/// ```swift
/// @SharedReader(.inMemory("count")) var count = 0
/// let reader = SharedReader($shared)   // sees every write to `shared`
/// ```
@propertyWrapper
@dynamicMemberLookup
public struct SharedReader<Value: Sendable>: Sendable {
  let reference: any ReaderReference<Value>

  init(reference: any ReaderReference<Value>) {
    self.reference = reference
  }

  /// Reads the value stored by `key`, starting from `wrappedValue` if nothing is stored.
  ///
  /// If another holder already shares this key, this one joins it and `wrappedValue` is not
  /// used.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedReaderKey<Value>) {
    reference = SharedStorage.current.registry.reference(
      for: key, writer: { key as? any SharedKey<Value> }, initialValue: wrappedValue)
  }

  /// Reads the optional value stored by `key`, starting from `nil`.
  public init<Wrapped: Sendable>(_ key: some SharedReaderKey<Wrapped?>)
  where Value == Wrapped? {
    self.init(wrappedValue: nil, key)
  }

  /// Reads the value stored by a key that carries its default value.
  public init<K: SharedReaderKey<Value>>(_ key: SharedKeyDefault<K>) {
    reference = SharedStorage.current.registry.reference(
      for: key, writer: { key as? any SharedKey<Value> }, initialValue: key.defaultValue)
  }

  /// Reads the value stored by a key that carries a default, overriding that default.
  public init<K: SharedReaderKey<Value>>(
    wrappedValue: @autoclosure () -> Value, _ key: SharedKeyDefault<K>
  ) {
    reference = SharedStorage.current.registry.reference(
      for: key, writer: { key as? any SharedKey<Value> }, initialValue: wrappedValue)
  }

  /// Reads the value stored by `key`, failing if nothing can be loaded.
  ///
  /// - Throws: The key's load error, or ``SharedLoadError/notFound(key:)`` if nothing is stored.
  public init(require key: some SharedReaderKey<Value>) async throws {
    reference = try await SharedStorage.current.registry.requireReference(
      for: key, writer: { key as? any SharedKey<Value> })
  }

  /// A constant value with no key.
  public init(value: Value) {
    reference = Reference(initialValue: value, key: nil, livesInReference: true)
  }

  /// A read-only view of a shared value: it sees every write made through it.
  public init(_ shared: Shared<Value>) {
    reference = shared.reference
  }

  /// Another holder of the same value; `SharedReader(projectedValue: $count)`.
  public init(projectedValue: SharedReader<Value>) {
    self = projectedValue
  }

  /// The non-`nil` view of an optional value, or `nil` if its value is `nil` now.
  public init?(_ base: SharedReader<Value?>) {
    guard let initial = base.reference.value else { return nil }
    reference = UnwrappedReference(readOnly: base.reference, initial: initial)
  }

  /// The current value.
  public var wrappedValue: Value { reference.value }

  /// The reader itself, for members, `publisher` and `values`.
  public var projectedValue: SharedReader<Value> {
    get { self }
    set { self = newValue }
  }

  /// A reader for a member of the value.
  public subscript<Member: Sendable>(
    dynamicMember keyPath: KeyPath<Value, Member>
  ) -> SharedReader<Member> {
    SharedReader<Member>(reference: KeyPathReference(readOnly: reference, keyPath: keyPath))
  }

  /// Asks the key for a fresh value and waits for it; throws (and sets ``loadError``) if the
  /// load fails.
  public func load() async throws { try await reference.load() }

  /// Whether the key is loading the value.
  public var isLoading: Bool { reference.isLoading }

  /// The error of the latest failed load or external update; `nil` after a success.
  public var loadError: (any Error)? { reference.loadError }

  /// A publisher of the current value, then of every change, in mutation order, as
  /// ``Shared/publisher``.
  public var publisher: AnyPublisher<Value, Never> {
    AnyPublisher(SharedPublisher(reference: reference))
  }

  /// The value now and after every change, conflated to the newest, as ``Shared/values``.
  public var values: AsyncStream<Value> { latestValues(of: reference) }
}
