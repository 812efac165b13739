/// A key for a value that lives in memory, shared by name within a storage scope.
///
/// Create one with ``SharedReaderKey/inMemory(_:)``:
///
/// ```swift
/// @Shared(.inMemory("count")) var count = 0
/// ```
///
/// The value lives as long as its storage scope (the process, or an isolated test scope from
/// `withSharedStorage(.isolated)`), also after every holder is released. Holders of the same
/// name and value type share one value; the same name with another value type is a separate
/// value. The value's only home is the shared reference, so Tether never needs to call this
/// key's `load` or `save`: a `withLock` costs a lock and no I/O. Called directly, `load` reads
/// and `save` writes the value in the current storage scope.
public struct InMemoryKey<Value: Sendable>: SharedKey, CustomStringConvertible {
  /// The name that identifies the value within its storage scope.
  public let name: String

  /// Creates a key for the in-memory value called `name`.
  public init(_ name: String) { self.name = name }

  /// The name: keys with the same name (and value type) share one value.
  public var id: String { name }

  /// A description for diagnostics: `.inMemory("name")`.
  public var description: String { ".inMemory(\"\(name)\")" }

  /// Resumes with the value currently stored under this name in the current storage scope,
  /// or with the initial value if none is stored.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    if let reference = SharedStorage.current.registry.existing(for: self) {
      continuation.resume(returning: reference.observedValue)
    } else {
      continuation.resumeReturningInitialValue()
    }
  }

  /// In-memory values change only through their holders, so there is nothing to watch.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    .empty
  }

  /// Stores `value` under this name in the current storage scope and resumes at once.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    let reference = SharedStorage.current.registry.reference(
      for: self, writer: { self }, initialValue: { value })
    reference.withLock { $0 = value }
    continuation.resume()
  }
}

extension InMemoryKey: AtomicSharedKey {
  /// Applies `transform` under the value's lock in the current storage scope, exactly like
  /// `withLock`, and resumes with the stored value. A `transform` that throws changes nothing.
  public func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void,
    initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    let reference = SharedStorage.current.registry.reference(
      for: self, writer: { self }, initialValue: { initialValue })
    continuation.resume(
      with: Result {
        try reference.withLock { value throws -> Value in
          try transform(&value)
          return value
        }
      })
  }
}

extension InMemoryKey: SpecialKey {
  static var registryType: ObjectIdentifier { ObjectIdentifier(Self.self) }
  static var livesInReference: Bool { true }
}

extension SharedReaderKey {
  /// A key for a value that lives in memory under `name` for the lifetime of the storage
  /// scope.
  ///
  /// ```swift
  /// @Shared(.inMemory("count")) var count = 0
  /// ```
  public static func inMemory<Value>(_ name: String) -> Self where Self == InMemoryKey<Value> {
    InMemoryKey(name)
  }
}

extension SharedKeyDefault {
  /// The in-memory key for `name`, where a key with a default is expected, so the default can
  /// be written inline: `@Shared(.inMemory("count")[default: 0]) var count`.
  public static func inMemory<Value>(_ name: String) -> InMemoryKey<Value>
  where Base == InMemoryKey<Value> {
    InMemoryKey(name)
  }
}
