/// A property wrapper that publishes its property's changes: Combine's `@Published`.
///
/// Use it on a property of a class. `$property` is a publisher that starts with the current
/// value and then sends each new value; in a class that is an ``ObservableObject`` every change
/// also sends the object's `objectWillChange` first. As in Combine, the new value is published
/// in the property's `willSet`: a subscriber reading the property itself still sees the old
/// value.
///
/// ```swift
/// @MainActor final class SearchModel: ObservableObject {
///   @Published var query = ""
///   @Published private(set) var results: [String] = []
///
///   init(search: @escaping @Sendable (String) -> [String]) {
///     $query.removeDuplicates().map(search).assign(to: &$results)
///   }
/// }
/// ```
///
/// The value is kept under a lock, so reading and writing from several threads is free of
/// data races; subscribers run on the thread that set the value (a `sink` written in an
/// actor's code runs on that actor).
@propertyWrapper
public struct Published<Value> {
  let storage: PublishedStorage<Value>

  /// Creates a published property with an initial value: `@Published var name = ""`.
  public init(wrappedValue: Value) {
    storage = PublishedStorage(wrappedValue)
  }

  /// Creates a published property with an initial value.
  public init(initialValue: Value) {
    self.init(wrappedValue: initialValue)
  }

  /// Unavailable: `@Published` is for properties of classes, whose accessors go through the
  /// enclosing instance.
  @available(*, unavailable, message: "@Published is only available on properties of classes")
  public var wrappedValue: Value {
    get { fatalError("@Published is only available on properties of classes") }
    set { fatalError("@Published is only available on properties of classes") }
  }

  /// The property's value, read and written through the instance that holds it (the compiler
  /// calls this for a `@Published` property of a class).
  public static subscript<EnclosingSelf: AnyObject>(
    _enclosingInstance object: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Published<Value>>
  ) -> Value {
    get { object[keyPath: storageKeyPath].storage.value }
    set { object[keyPath: storageKeyPath].storage.set(newValue) }
  }

  /// The property's publisher, `$property`: it starts with the current value.
  ///
  /// Settable only so that `assign(to: &$property)` can take it `inout`; setting it keeps this
  /// property's storage.
  public var projectedValue: Publisher {
    get { Publisher(storage) }
    set {}  // the storage stays: `assign(to:)` writes through the publisher it was given
  }

  /// The publisher of a `@Published` property: the current value, then each new value.
  ///
  /// It never fails and never finishes; each subscriber sees the values in order, on the
  /// thread that set them.
  public struct Publisher: Streams.Publisher {
    /// The property's values.
    public typealias Output = Value
    /// The publisher never fails.
    public typealias Failure = Never

    let storage: PublishedStorage<Value>

    init(_ storage: PublishedStorage<Value>) { self.storage = storage }

    /// Attaches the subscriber; it receives the current value when it has demand, then every
    /// later value.
    public func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
      storage.subject.subscribe(subscriber)
    }
  }
}

extension Published: Sendable where Value: Sendable {}
extension Published.Publisher: Sendable where Value: Sendable {}

extension Published: PublishedField {
  func installObjectWillChange(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher
  {
    storage.installObjectWillChange(publisher)
  }
}
