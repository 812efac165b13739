import Synchronization

/// What a `SharedReader` holds: a readable, observable home of a value.
///
/// Implemented by the root `Reference` and by derived references (a member key path, an
/// unwrapped optional) that read through their parent.
protocol ReaderReference<Value>: AnyObject, Sendable {
  associatedtype Value: Sendable

  /// The current value. Registers an Observation access; takes one lock; never does I/O.
  var value: Value { get }
  /// What a value derived from this one reads: `value`, except inside a running `withLock`
  /// body of the root on this thread, where it is the value as the body changed it so far.
  var valueForDerived: Value { get }
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
  /// Like `addListener`, handing values straight to `receiver` (one call less per value).
  func addReceiver(_ receiver: any ValueReceiver<Value>) -> ListenerToken
  /// Tells Observation trackers of the value that it changed (a holder was re-pointed).
  func announceValueChange()
  /// Tells Observation trackers of `loadError` that it changed (a re-key failed).
  func announceLoadError()
  /// Tells Observation trackers of `isLoading` that it changed (a re-key started or ended).
  func announceLoading()
}

extension ReaderReference {
  func addReceiver(_ receiver: any ValueReceiver<Value>) -> ListenerToken {
    addListener { receiver.offer($0) }
  }
}

/// Something a reference's drainer hands values to, one call at a time.
@usableFromInline
protocol ValueReceiver<Value>: AnyObject, Sendable {
  associatedtype Value
  func offer(_ value: Value)
}

/// A `ValueReceiver` that calls a closure.
final class ClosureReceiver<Value>: ValueReceiver {
  let receive: @Sendable (Value) -> Void
  init(_ receive: @escaping @Sendable (Value) -> Void) { self.receive = receive }
  func offer(_ value: Value) { receive(value) }
}

/// What a `Shared` holds: a reference that can also be mutated and saved.
protocol MutableReference<Value>: ReaderReference {
  /// The error of the latest save, if it failed.
  var saveError: (any Error)? { get }
  /// Runs `body` on the value under the root reference's lock, then notifies and saves.
  /// A nested `withLock` on the same value is reported at `fileID` and `line` when given.
  func withLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString?, line: UInt?
  ) throws(E) -> R
  /// Saves the current value at once and waits for the key.
  func save() async throws
  /// Applies `body` atomically where the value is stored and makes the result the value.
  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R
}

extension MutableReference {
  /// `withLock` without a caller's location for reports.
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try withLock(body, fileID: nil, line: nil)
  }
}

/// One registered change listener of a root reference.
@usableFromInline
final class Listener<Value: Sendable>: Sendable {
  /// The version of the value when the listener joined; it gets only later changes.
  @usableFromInline let joinedAt: UInt64
  @usableFromInline let receiver: any ValueReceiver<Value>
  @usableFromInline let cancelled = Atomic<Bool>(false)

  init(joinedAt: UInt64, receiver: any ValueReceiver<Value>) {
    self.joinedAt = joinedAt
    self.receiver = receiver
  }

  var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  /// Delivers a value unless the listener was cancelled.
  @inlinable
  func receive(_ value: Value) {
    guard !cancelled.load(ordering: .acquiring) else { return }
    receiver.offer(value)
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
