import Synchronization

/// What a `SharedReader` holds: a readable, observable home of a value.
///
/// Implemented by the root `Reference` and by derived references (a member key path, an
/// unwrapped optional) that read through their parent.
protocol ReaderReference<Value>: AnyObject, Sendable {
  associatedtype Value: Sendable

  /// The current value. Registers an Observation access; takes one lock; never does I/O.
  var value: Value { get }
  /// Whether the key is loading.
  var isLoading: Bool { get }
  /// The error of the latest load or external update, if it failed.
  var loadError: (any Error)? { get }
  /// The root reference this one reads through (itself for a root).
  var root: AnyObject { get }

  /// Asks the key for a fresh value and waits for it.
  func load() async throws
  /// Calls `receive` with the current value, then with each change, in order, serially.
  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken
}

/// What a `Shared` holds: a reference that can also be mutated and saved.
protocol MutableReference<Value>: ReaderReference {
  /// The error of the latest save, if it failed.
  var saveError: (any Error)? { get }
  /// Runs `body` on the value under the root reference's lock, then notifies and saves.
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R
  /// Saves the current value at once and waits for the key.
  func save() async throws
}

/// One registered change listener of a root reference.
@usableFromInline
final class Listener<Value: Sendable>: Sendable {
  /// The version of the value when the listener joined; it gets only later changes.
  @usableFromInline let joinedAt: UInt64
  @usableFromInline let receiveValue: @Sendable (Value) -> Void
  @usableFromInline let cancelled = Atomic<Bool>(false)

  init(joinedAt: UInt64, receive: @escaping @Sendable (Value) -> Void) {
    self.joinedAt = joinedAt
    self.receiveValue = receive
  }

  var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Delivers a value unless the listener was cancelled.
  @inlinable
  func receive(_ value: Value) {
    guard !cancelled.load(ordering: .acquiring) else { return }
    receiveValue(value)
  }

  /// Stops deliveries; returns `false` if it was already cancelled.
  func markCancelled() -> Bool {
    !cancelled.exchange(true, ordering: .acquiringAndReleasing)
  }
}

/// Ends a listener registration. Holding it keeps the reference alive.
struct ListenerToken: Sendable {
  let cancel: @Sendable () -> Void
}
