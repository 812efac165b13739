import Streams
import Synchronization
import TetherSupport

/// A reference whose value comes from a parent's: everything but the value (the root, the
/// load state, loading, announcements) is the parent's.
protocol DerivedReference: ReaderReference {
  associatedtype Parent: Sendable
  var parent: any ReaderReference<Parent> { get }
}

extension DerivedReference {
  var root: AnyObject { parent.root }
  var valueForDerived: Value { value }
  var isLoading: Bool { parent.isLoading }
  var loadError: (any Error)? { parent.loadError }

  func load() async throws { try await parent.load() }
  func announceValueChange() { parent.announceValueChange() }
  func announceLoadError() { parent.announceLoadError() }
  func announceLoading() { parent.announceLoading() }

  /// Listens to the parent's values through `derive`. When `Value` is equatable at run time,
  /// a derived value equal to the one before it is skipped: the parent changed, but maybe not
  /// the part this reference shows.
  func addListener(
    deriving derive: @escaping @Sendable (Parent) -> Value,
    _ receive: @escaping @Sendable (Value) -> Void
  ) -> ListenerToken {
    guard let isEqual = runtimeEquality(Value.self) else {
      return parent.addListener { receive(derive($0)) }
    }
    let last = Lock<Value?>(nil)
    return parent.addListener { parentValue in
      let derived = derive(parentValue)
      let repeated = last.withLock { last -> Bool in
        defer { last = derived }
        return last.map { isEqual.isEqual($0, derived) } ?? false
      }
      if !repeated { receive(derived) }
    }
  }
}

/// A derived reference that can also be written: its saves are the parent's, and a read-only
/// parent (`mutableParent == nil`) has no save state and saves nothing.
protocol MutableDerivedReference: DerivedReference, MutableReference {
  var mutableParent: (any MutableReference<Parent>)? { get }
}

extension MutableDerivedReference {
  var saveError: (any Error)? { mutableParent?.saveError }
  func save() async throws { try await mutableParent?.save() }
}

/// A member of a parent's value, read and written through the parent's lock and storage.
///
/// `$settings.theme` is one of these: `withLock` locks the root reference, mutates the
/// member in place, and the root notifies and saves the whole value.
final class KeyPathReference<Parent: Sendable, Value: Sendable>: MutableDerivedReference {
  let parent: any ReaderReference<Parent>
  let mutableParent: (any MutableReference<Parent>)?
  private let path: SendableKeyPath<Parent, Value>
  private var keyPath: KeyPath<Parent, Value> { path.keyPath }

  init(readOnly parent: any ReaderReference<Parent>, keyPath: KeyPath<Parent, Value>) {
    self.parent = parent
    self.mutableParent = nil
    self.path = SendableKeyPath(keyPath: keyPath)
  }

  init(_ parent: any MutableReference<Parent>, keyPath: WritableKeyPath<Parent, Value>) {
    self.parent = parent
    self.mutableParent = parent
    self.path = SendableKeyPath(keyPath: keyPath)
  }

  var value: Value { parent.valueForDerived[keyPath: keyPath] }
  func withLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString?, line: UInt?
  ) throws(E) -> R {
    guard let mutableParent, let writable = keyPath as? WritableKeyPath<Parent, Value> else {
      preconditionFailure("a read-only member cannot be mutated")  // unreachable: no API
    }
    return try mutableParent.withLock(
      { (parentValue: inout Parent) throws(E) -> R in try body(&parentValue[keyPath: writable]) },
      fileID: fileID, line: line)
  }

  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    guard let mutableParent else { preconditionFailure("a read-only member cannot be mutated") }
    let path = WritableSendableKeyPath(path)
    return try await mutableParent.update { parentValue in
      try body(&parentValue[keyPath: path.keyPath])
    }
  }

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    let path = path
    return addListener(deriving: { $0[keyPath: path.keyPath] }, receive)
  }
}

/// The non-`nil` view of an optional shared value, from `Shared(_: Shared<Value?>)`.
///
/// While the parent is non-`nil` it reads and writes through it. If the parent becomes `nil`,
/// reads return the last non-`nil` value and writes change only that copy.
final class UnwrappedReference<Value: Sendable>: MutableDerivedReference {
  let parent: any ReaderReference<Value?>
  let mutableParent: (any MutableReference<Value?>)?
  private let lastValue: Lock<Value>

  init(readOnly parent: any ReaderReference<Value?>, initial: Value) {
    self.parent = parent
    self.mutableParent = nil
    self.lastValue = Lock(initial)
  }

  init(_ parent: any MutableReference<Value?>, initial: Value) {
    self.parent = parent
    self.mutableParent = parent
    self.lastValue = Lock(initial)
  }

  var value: Value {
    if let value = parent.valueForDerived {
      lastValue.withLock { $0 = value }
      return value
    }
    return lastValue.withLock { $0 }
  }

  func withLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString?, line: UInt?
  ) throws(E) -> R {
    guard let mutableParent else { preconditionFailure("a read-only value cannot be mutated") }
    let fallback = lastValue.withLock { $0 }
    var updated: Value?
    let result = try mutableParent.withLock(
      { (optional: inout Value?) throws(E) -> R in
        guard var wrapped = optional else {
          var copy = fallback
          defer { updated = copy }
          return try body(&copy)
        }
        defer {
          optional = wrapped
          updated = wrapped
        }
        return try body(&wrapped)
      }, fileID: fileID, line: line)
    if let updated { lastValue.withLock { $0 = updated } }
    return result
  }

  /// Updates through the parent while it is non-`nil`; a `nil` parent is left alone and `body`
  /// runs on the last non-`nil` value, as `withLock` does.
  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    guard let mutableParent else { preconditionFailure("a read-only value cannot be mutated") }
    let fallback = lastValue.withLock { $0 }
    let (result, updated) = try await mutableParent.update { optional -> (R, Value) in
      var wrapped = optional ?? fallback
      let result = try body(&wrapped)
      if optional != nil { optional = wrapped }
      return (result, wrapped)
    }
    lastValue.withLock { $0 = updated }
    return result
  }

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    parent.addListener { optional in
      if let value = optional { receive(value) }
    }
  }
}

/// A read-only value computed from a parent's, from `read { }`.
final class ComputedReference<Parent: Sendable, Value: Sendable>: DerivedReference {
  let parent: any ReaderReference<Parent>
  private let transform: @Sendable (Parent) -> Value

  init(_ parent: any ReaderReference<Parent>, transform: @escaping @Sendable (Parent) -> Value) {
    self.parent = parent
    self.transform = transform
  }

  var value: Value { transform(parent.valueForDerived) }

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    addListener(deriving: transform, receive)
  }
}
