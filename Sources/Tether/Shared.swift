import Streams

/// A property wrapper for a value shared with every other holder of the same key.
///
/// Declare it with a key that says where the value lives; every `@Shared` of the same key
/// (in the same storage scope) shares one value, whichever thread or type holds it:
///
/// ```swift
/// @Shared(.inMemory("count")) var count = 0
/// $count.withLock { $0 += 1 }             // the one way to mutate
/// for await count in $count.values { }    // the current value, then the latest
/// ```
///
/// Reading ``wrappedValue`` takes a lock (none for plain-data values of at most 8 bytes, which
/// are read from one atomic word) and never waits for I/O. ``withLock(_:)`` mutates
/// atomically across every holder; afterwards, if the value changed, observers are notified
/// and the key is asked to save, outside the lock and in mutation order. Reads register with
/// the Observation framework, so an `@Observable` model that holds an
/// `@ObservationIgnored @Shared` property is re-tracked when the value changes from anywhere.
@propertyWrapper
@dynamicMemberLookup
public struct Shared<Value: Sendable>: Sendable {
  /// This holder: every copy of it (and `$value`) shares it, so `load(_:)` re-points them all.
  @usableFromInline let holder: Holder<Value>
  /// The reference the holder started with when it is a root (not a derived member), so hot
  /// paths can call it directly and be specialized for `Value` in the caller's module. They
  /// use it only while `holder.rekeyed` is false: re-pointing costs reads one relaxed load.
  /// `holder` keeps it alive for its whole life, so it is held unretained: that spares a
  /// retain and a release on every access.
  @usableFromInline let root: Unmanaged<Reference<Value>>?

  /// The reference every other call goes through: the holder, which forwards to its key's.
  var reference: any MutableReference<Value> { holder }

  init(reference: any MutableReference<Value>) {
    self.holder = Holder(reference)
    self.root = (reference as? Reference<Value>).map { Unmanaged.passUnretained($0) }
  }

  init(root: Reference<Value>) {
    self.holder = Holder(root)
    self.root = Unmanaged.passUnretained(root)
  }

  /// Shares the value stored by `key`, starting from `wrappedValue` if nothing is stored.
  ///
  /// If another holder already shares this key, this one joins it and `wrappedValue` is not
  /// used. Otherwise the key is asked to load (with `.initialValue(wrappedValue)`), then to
  /// subscribe to external changes.
  public init(wrappedValue: @autoclosure () -> Value, _ key: some SharedKey<Value>) {
    self.init(
      root: SharedStorage.current.registry.reference(
        for: key, writer: { key }, initialValue: wrappedValue))
  }

  /// Shares the optional value stored by `key`, starting from `nil`.
  public init<Wrapped: Sendable>(_ key: some SharedKey<Wrapped?>) where Value == Wrapped? {
    self.init(wrappedValue: nil, key)
  }

  /// Shares the value stored by a key that carries its default value.
  ///
  /// ```swift
  /// @Shared(.count) var count   // `.count` is `Self[.inMemory("count"), default: 0]`
  /// ```
  public init<K: SharedKey<Value>>(_ key: SharedKeyDefault<K>) {
    self.init(
      root: SharedStorage.current.registry.reference(
        for: key, writer: { key }, initialValue: key.defaultValue))
  }

  /// Shares the value stored by a key that carries a default, overriding that default.
  public init<K: SharedKey<Value>>(
    wrappedValue: @autoclosure () -> Value, _ key: SharedKeyDefault<K>
  ) {
    self.init(
      root: SharedStorage.current.registry.reference(
        for: key, writer: { key }, initialValue: wrappedValue))
  }

  /// Shares the value stored by `key`, failing if nothing can be loaded.
  ///
  /// - Throws: The key's load error, or ``SharedLoadError/notFound(key:)`` if nothing is stored.
  public init(require key: some SharedKey<Value>) async throws {
    self.init(
      root: try await SharedStorage.current.registry.requireReference(for: key, writer: { key }))
  }

  /// A shared value with no key: it lives in memory for as long as something holds it.
  ///
  /// Pass it (or its projected value) to other code to share it.
  public init(value: Value) {
    self.init(root: Reference(initialValue: value, key: nil, livesInReference: true))
  }

  /// Another holder of the same shared value; `Shared($count)`.
  public init(projectedValue: Shared<Value>) {
    self = projectedValue
  }

  /// The non-`nil` view of an optional shared value, or `nil` if its value is `nil` now.
  ///
  /// Reads and writes go through `base`. If `base` later becomes `nil`, this view keeps its
  /// last non-`nil` value.
  public init?(_ base: Shared<Value?>) {
    guard let initial = base.reference.value else { return nil }
    self.init(reference: UnwrappedReference(base.reference, initial: initial))
  }

  /// The current value. Read-only: mutate with ``withLock(_:)``.
  ///
  /// Assigning (`model.count += 1`) does not compile: a read followed by a write would lose
  /// concurrent changes, so the compiler points at `withLock`.
  public var wrappedValue: Value {
    @inlinable get {
      if !holder.isRekeyed {
        if let root { return root._withUnsafeGuaranteedRef { $0.value } }
      } else if let current = holder.currentRoot {
        return current.value
      }
      return derivedValue()
    }
    @available(
      *, unavailable,
      message: "Mutate a shared value atomically with '$value.withLock { $0 = newValue }'"
    )
    nonmutating set { withLock { $0 = newValue } }
  }

  /// A derived or re-keyed holder's value. Specialized for `Value` in the caller and never
  /// inlined, so the inlined `wrappedValue` returns in registers on every path.
  @inlinable @inline(never) func derivedValue() -> Value { holderValue() }

  @usableFromInline func holderValue() -> Value { holder.value }

  /// The shared value itself, for `withLock`, members, `publisher` and `values`.
  public var projectedValue: Shared<Value> {
    get { self }
    set { self = newValue }
  }

  /// Mutates the value atomically across every holder and derived member.
  ///
  /// `body` runs under the value's lock, so keep it short and do not touch other shared
  /// values' locks from inside it. After it returns, if the value changed (always for values
  /// that are not `Equatable`), observers are notified and the key is asked to save with
  /// `.didSet`. Neither happens under the lock, and saves reach the key in mutation order.
  @discardableResult
  @inlinable
  public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    guard let root, !holder.isRekeyed else {
      if holder.isRekeyed, let current = holder.currentRoot { return try current.withLock(body) }
      return try derivedWithLock(body)
    }
    var outcome: Result<R, E>?
    root._withUnsafeGuaranteedRef { reference in
      do throws(E) {
        outcome = .success(try reference.withLock(body))
      } catch {
        outcome = .failure(error)
      }
    }
    return try outcome!.get()
  }

  @usableFromInline
  func derivedWithLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try holder.withLock(body)
  }

  /// Applies `body` to the latest *stored* value atomically with respect to every other
  /// writer of that storage, stores the result, and returns what `body` returned.
  ///
  /// ```swift
  /// let next = try await $counter.update { $0 += 1; return $0 }   // exact across processes
  /// ```
  ///
  /// The stored result becomes this value (holders and observers see it; it is not saved
  /// again). A key opts in by conforming to ``AtomicSharedKey``: `.inMemory` does (it is
  /// ``withLock(_:)``), `.fileStorage` holds a lock on the file across read, transform and
  /// write. For any other key `update` is `withLock` followed by a save conditional on the
  /// version the body's value was derived from: when the key refuses it as a conflict
  /// (`SaveContinuation.resume(conflict:…)`), `body` runs again on the stored value after a
  /// jittered back-off, for up to 30 seconds from the start. A key without versions saves
  /// unconditionally: exact among the holders in this process only.
  ///
  /// `body` may run more than once (a key re-runs it on a newer value after a conflict), so it
  /// must have no side effects besides its argument; the result returned is the one of the run
  /// that was stored.
  ///
  /// - Throws: What `body` throws (nothing is stored then), the key's error (the value is
  ///   unchanged), the key's conflict once the 30 seconds have passed (nothing is stored), or
  ///   any other save error (``saveError`` is set too; whether that save landed is unknown).
  @inlinable
  public func update<R: Sendable>(
    _ body: @Sendable (inout Value) throws -> R
  ) async throws -> R {
    // A value that lives only in its reference (in memory) updates in place: `withLock`,
    // specialized here.
    if let root, !holder.isRekeyed,
      root._withUnsafeGuaranteedRef({ $0.updatesInPlace })
    {
      return try withLock(body)
    }
    return try await slowUpdate(body)
  }

  @usableFromInline
  func slowUpdate<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    try await reference.update(body)
  }

  /// A shared value for a member: reads and writes go through this value's lock and storage.
  ///
  /// ```swift
  /// $settings.theme.withLock { $0 = .dark }   // saves the whole settings value
  /// ```
  public subscript<Member: Sendable>(
    dynamicMember keyPath: WritableKeyPath<Value, Member>
  ) -> Shared<Member> {
    Shared<Member>(reference: KeyPathReference(reference, keyPath: keyPath))
  }

  /// A read-only shared value computed from this one; it changes when the result does.
  ///
  /// ```swift
  /// let count = $todos.read { $0.count }   // SharedReader<Int>
  /// ```
  ///
  /// `transform` runs on each read and on each change of this value (for listeners), on any
  /// thread, so keep it cheap and free of side effects.
  public func read<Member: Sendable>(
    _ transform: @escaping @Sendable (Value) -> Member
  ) -> SharedReader<Member> {
    SharedReader<Member>(reference: ComputedReference(reference, transform: transform))
  }

  /// Asks the key for a fresh value and waits for it; throws (and sets ``loadError``) if the
  /// load fails.
  public func load() async throws { try await reference.load() }

  /// Points this holder at another key and loads it: a query by id, another user's document.
  ///
  /// ```swift
  /// @Shared(.inMemory("user-1")) var user = User()
  /// try await $user.load(.inMemory("user-2"))   // `user` now reads and writes user 2
  /// ```
  ///
  /// The key is loaded first; only if that succeeds does this holder (every copy of it, also
  /// a `let` one and its projected value) switch to the key's value, joining the holders that
  /// already share it. If nothing is stored, a new value starts from this holder's value now.
  /// Members derived from this holder follow; publishers and `values` streams made before
  /// keep the key they subscribed to.
  ///
  /// - Throws: The key's load error: ``loadError`` is set and the holder stays on its old key.
  public func load(_ key: some SharedKey<Value>) async throws {
    try await holder.load(key, writer: { key }, defaultValue: nil, writable: true)
  }

  /// Points this holder at a key that carries a default, and loads it; if nothing is stored,
  /// a new value starts from the key's default.
  public func load<K: SharedKey<Value>>(_ key: SharedKeyDefault<K>) async throws {
    try await holder.load(key, writer: { key }, defaultValue: key.defaultValue(), writable: true)
  }

  /// Saves the current value at once, skipping any throttling, and waits for the key.
  ///
  /// Throws (and sets ``saveError``) if the save fails.
  public func save() async throws { try await reference.save() }

  /// Whether the key is loading the value.
  public var isLoading: Bool { reference.isLoading }

  /// The error of the latest failed load or external update; `nil` after a success.
  public var loadError: (any Error)? { reference.loadError }

  /// The error of the latest failed save; `nil` after a success.
  public var saveError: (any Error)? { reference.saveError }

  /// A publisher of the current value, then of every change, in mutation order.
  ///
  /// Each subscriber gets the value at the moment it subscribes, then every later change
  /// exactly once and in the order the mutations happened, even when they come from many
  /// threads. An `Equatable` value that did not change is not re-emitted. Values are
  /// delivered outside the value's lock, so a subscriber may read or mutate the same shared
  /// value. A subscriber that has no outstanding demand gets only the newest value when it
  /// asks again.
  ///
  /// ```swift
  /// let cancellable = $count.publisher.sink { print("count is", $0) }
  /// ```
  public var publisher: AnyPublisher<Value, Never> {
    AnyPublisher(SharedPublisher(reference: reference))
  }

  /// The value now and after every change, for state: it skips to the newest value.
  ///
  /// Each loop gets the current value first, then, each time it asks for the next element,
  /// the latest value (intermediate states may be skipped, memory stays constant). An
  /// `Equatable` value that did not change is not yielded again. Cancelling the loop's task
  /// unsubscribes. Use `publisher.values` from `Streams` when every change matters.
  public var values: AsyncStream<Value> { latestValues(of: reference) }
}

/// An `AsyncStream` over a reference's values that conflates to the newest one.
func latestValues<Value: Sendable>(of reference: any ReaderReference<Value>) -> AsyncStream<Value> {
  AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
    let token = reference.addListener { continuation.yield($0) }
    continuation.onTermination = { _ in token.cancel() }
  }
}
