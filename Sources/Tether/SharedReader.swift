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
  /// This holder: every copy of it shares it, so `load(_:)` re-points them all.
  let holder: Holder<Value>

  /// The reference every call goes through: the holder, which forwards to its key's.
  var reference: any ReaderReference<Value> { holder }

  init(reference: any ReaderReference<Value>) {
    holder = Holder(readOnly: reference)
  }

  /// Reads the value stored by `key`, starting from `wrappedValue` if nothing is stored.
  ///
  /// If another holder already shares this key, this one joins it and `wrappedValue` is not
  /// used.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedReaderKey<Value>) {
    self.init(
      reference: SharedStorage.current.registry.reference(
        for: key, writer: { key as? any SharedKey<Value> }, initialValue: wrappedValue))
  }

  /// Reads the optional value stored by `key`, starting from `nil`.
  public init<Wrapped: Sendable>(_ key: some SharedReaderKey<Wrapped?>)
  where Value == Wrapped? {
    self.init(wrappedValue: nil, key)
  }

  /// Reads the value stored by a key that carries its default value.
  public init<K: SharedReaderKey<Value>>(_ key: SharedKeyDefault<K>) {
    self.init(
      reference: SharedStorage.current.registry.reference(
        for: key, writer: { key as? any SharedKey<Value> }, initialValue: key.defaultValue))
  }

  /// Reads the value stored by a key that carries a default, overriding that default.
  public init<K: SharedReaderKey<Value>>(
    wrappedValue: @autoclosure () -> Value, _ key: SharedKeyDefault<K>
  ) {
    self.init(
      reference: SharedStorage.current.registry.reference(
        for: key, writer: { key as? any SharedKey<Value> }, initialValue: wrappedValue))
  }

  /// Reads the value stored by `key`, failing if nothing can be loaded.
  ///
  /// - Throws: The key's load error, or ``SharedLoadError/notFound`` if nothing is stored.
  public init(require key: some SharedReaderKey<Value>) async throws {
    self.init(
      reference: try await SharedStorage.current.registry.requireReference(
        for: key, writer: { key as? any SharedKey<Value> }))
  }

  /// A reader of a value that never changes, for previews, tests and defaults.
  ///
  /// ```swift
  /// FeatureModel(title: .constant("Preview"))
  /// ```
  public static func constant(_ value: Value) -> Self { Self(value: value) }

  /// A constant value with no key.
  public init(value: Value) {
    self.init(reference: Reference(initialValue: value, key: nil, livesInReference: true))
  }

  /// A read-only view of a shared value: it sees every write made through it.
  public init(_ shared: Shared<Value>) {
    self.init(reference: shared.holder)
  }

  /// Another holder of the same value; `SharedReader(projectedValue: $count)`.
  public init(projectedValue: SharedReader<Value>) {
    self = projectedValue
  }

  /// The non-`nil` view of an optional value, or `nil` if its value is `nil` now.
  public init?(_ base: SharedReader<Value?>) {
    guard let initial = base.reference.value else { return nil }
    self.init(reference: UnwrappedReference(readOnly: base.reference, initial: initial))
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

  /// A reader computed from this one's value; it changes when the result does.
  ///
  /// ```swift
  /// let isEmpty = $todos.read { $0.isEmpty }
  /// ```
  public func read<Member: Sendable>(
    _ transform: @escaping @Sendable (Value) -> Member
  ) -> SharedReader<Member> {
    SharedReader<Member>(reference: ComputedReference(reference, transform: transform))
  }

  /// Asks the key for a fresh value and waits for it; throws (and sets ``loadError``) if the
  /// load fails.
  public func load() async throws { try await reference.load() }

  /// Points this reader at another key and loads it, as `Shared`'s `load(_:)` does.
  ///
  /// - Throws: The key's load error: ``loadError`` is set and the reader stays on its old key.
  public func load(_ key: some SharedReaderKey<Value>) async throws {
    try await holder.load(
      key, writer: { key as? any SharedKey<Value> }, defaultValue: nil, writable: false)
  }

  /// Points this reader at a key that carries a default, and loads it; if nothing is stored,
  /// a new value starts from the key's default.
  public func load<K: SharedReaderKey<Value>>(_ key: SharedKeyDefault<K>) async throws {
    try await holder.load(
      key, writer: { key as? any SharedKey<Value> }, defaultValue: key.defaultValue(),
      writable: false)
  }

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
