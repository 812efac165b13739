/// A key that carries its own default value, so declarations need not repeat it.
///
/// Build one with a key's `[default:]` subscript, usually inside a static helper:
///
/// ```swift
/// extension SharedReaderKey where Self == InMemoryKey<Int>.Default {
///   static var count: Self { Self[.inMemory("count"), default: 0] }
/// }
///
/// @Shared(.count) var count   // starts at 0
/// ```
///
/// It shares its value with the base key: `@Shared(.count)` and
/// `@Shared(.inMemory("count"))` are the same value.
public struct SharedKeyDefault<Base: SharedReaderKey>: SharedReaderKey {
  /// The key that loads, watches and saves the value.
  public let base: Base
  let defaultValue: @Sendable () -> Base.Value

  /// Wraps `base` with a default value.
  public init(_ base: Base, default value: @escaping @Sendable () -> Base.Value) {
    self.base = base
    self.defaultValue = value
  }

  /// Wraps `key` with a default value; `Self[.inMemory("count"), default: 0]`.
  public static subscript(
    _ key: Base, default value: @autoclosure @escaping @Sendable () -> Base.Value
  ) -> Self {
    Self(key, default: value)
  }

  /// The base key's id.
  public var id: Base.ID { base.id }

  /// Loads through the base key.
  public func load(context: LoadContext<Base.Value>, continuation: LoadContinuation<Base.Value>) {
    base.load(context: context, continuation: continuation)
  }

  /// Subscribes through the base key.
  public func subscribe(
    context: LoadContext<Base.Value>, subscriber: SharedSubscriber<Base.Value>
  ) -> SharedSubscription {
    base.subscribe(context: context, subscriber: subscriber)
  }
}

extension SharedKeyDefault: SharedKey where Base: SharedKey {
  /// Saves through the base key.
  public func save(_ value: Base.Value, context: SaveContext, continuation: SaveContinuation) {
    base.save(value, context: context, continuation: continuation)
  }
}

extension SharedKeyDefault: AtomicSharedKey where Base: AtomicSharedKey {
  /// Updates through the base key.
  public func update(
    _ transform: @escaping @Sendable (inout Base.Value) throws -> Void,
    initialValue: Base.Value,
    continuation: UpdateContinuation<Base.Value>
  ) {
    base.update(transform, initialValue: initialValue, continuation: continuation)
  }
}

extension SharedKeyDefault: CustomStringConvertible {
  /// The base key's description.
  public var description: String { String(describing: base) }
}

extension SharedKeyDefault: SpecialKey {
  static var registryType: ObjectIdentifier { KeyTraits.of(Base.self).registryType }
  static var livesInReference: Bool { KeyTraits.of(Base.self).pinned }
}

extension SharedReaderKey {
  /// The form of this key that carries a default value.
  public typealias Default = SharedKeyDefault<Self>

  /// This key with a default value: `.inMemory("count")[default: 0]`.
  public subscript(default value: @autoclosure @escaping @Sendable () -> Value) -> Default {
    SharedKeyDefault(self, default: value)
  }
}
