import Observation
import Streams
import Synchronization
import TetherSupport

/// The one home of a shared value in a storage scope: its lock, its key, its observers.
///
/// Every `Shared` and `SharedReader` of one key (and every derived member of them) holds the
/// same `Reference`. State lives in one `Mutex`; nothing calls out while holding it.
///
/// Observers and saves are delivered outside the lock, in mutation order, by a single
/// *drainer* (`OrderedDelivery`): the thread that makes a change while nobody is draining
/// delivers it, then keeps delivering whatever other threads queued meanwhile (the outbox). A
/// key's `save` or a sink that touches the same value therefore never deadlocks; its own change
/// is queued behind the one being delivered.
///
/// The class is split by responsibility: this file holds the stored layout; the read path
/// (`Reference+Read`), reads and writes from inside a body (`+NestedAccess`), `withLock`
/// (`+WithLock`), ordered delivery to listeners (`+Delivery`), save sequencing and versions
/// (`+Saving`), `update` (`+Update`), the Observation bridge (`+Observation`) and the key link
/// (`+KeyLink`: load, subscribe, apply) each have their own.
@usableFromInline
final class Reference<Value: Sendable>: MutableReference {
  @usableFromInline
  enum Delivery: Sendable {
    /// The value changed to `value` (now at `version`); save it if `save` has a sequence.
    /// `basis` is what it was derived from (captured under the lock the body ran under).
    case change(version: UInt64, value: Value, save: UInt64?, basis: VersionEngine.Basis?)
    /// A listener joined; it gets `value` first.
    case initial(Listener<Value>, Value)
    /// `save()` (or an `update` attempt) was called, derived from `basis`.
    case save(
      Value, basis: VersionEngine.Basis?, sequence: UInt64, completion: SaveCompletion)
  }

  @usableFromInline
  struct State {
    @usableFromInline var value: Value
    /// Bumped by every applied change; orders deliveries and detects stale loads.
    @usableFromInline var version: UInt64 = 0
    @usableFromInline var isLoading = false
    /// Whether the value was ever read through `value`, the only way an Observation tracker
    /// can start watching it. Until then changes skip the registrar (~100 ns each on Linux);
    /// afterwards every change notifies it, so no tracker ever misses one.
    @usableFromInline var observable = false
    @usableFromInline var loadError: (any Error)?
    @usableFromInline var saveError: (any Error)?
    /// The sequence number given to the latest save request.
    @usableFromInline var saveSequence: UInt64 = 0
    /// The sequence number of the latest save whose result set `saveError`.
    @usableFromInline var saveResultSequence: UInt64 = 0
    @usableFromInline var listeners: [Listener<Value>] = []
    @usableFromInline var outbox = DeliveryQueue<Delivery>()
    @usableFromInline var subscription: SharedSubscription?
    /// The versions and the one save in flight (see `VersionEngine`); `nil` for a value that
    /// lives only here.
    var saves: SaveQueue<Value>?

    /// What a change made now is derived from, handed to its save.
    @usableFromInline var basis: VersionEngine.Basis? { saves?.engine.basis }

    @usableFromInline init(value: Value) { self.value = value }
  }

  // Stored properties are laid out in declaration order: the one-byte `drainer` follows `state`
  // and `snapshot` follows `key`, filling the padding after them (and `State.observable` sits by
  // `isLoading`). An `Int` reference is 280 bytes, not 296: one malloc size class smaller.
  @usableFromInline let state: Lock<State>
  /// Who delivers listeners' changes and saves, in mutation order (see `OrderedDelivery`).
  @usableFromInline let drainer = OrderedDelivery()
  /// Whether the value's only home is this reference (in-memory and local values): then the
  /// key is never asked to load, subscribe or save.
  let livesInReference: Bool
  /// Whether `writer.save` is called on changes.
  @usableFromInline let savesToKey: Bool
  /// Whether `update` is `withLock`: the value lives only here, or there is no key to write.
  @usableFromInline let updatesInPlace: Bool
  /// For a *word-sized* value (plain data of at most 8 bytes: `Int`, `Bool`, `Double`, a
  /// payload-free enum), a copy of its bytes, rewritten in the same critical section as every
  /// change. Once `gate` says so, reads load this word instead of taking the lock.
  @usableFromInline let word: Atomic<UInt64>
  /// What a read needs to know, in the one word it loads: the thread running a `withLock` body
  /// on this value (its non-zero, even id; 0 when no body runs), plus `ReadGate.skipsLock` once
  /// the first read of a word-sized value set it (inside the lock, right after
  /// `State.observable`): from then on every change notifies Observation, so reads need no
  /// lock to mark it. A read that finds exactly `skipsLock` loads `word`; any other word takes
  /// the slow path. Written only under `state`'s lock, so a thread that finds its own id in it
  /// holds the lock: its body is touching the value it is mutating.
  @usableFromInline let gate = Atomic<UInt>(0)
  /// What only some references need (see `ReferenceExtras`); `nil` for an in-memory value
  /// made outside a test that records issues.
  private let extras: ReferenceExtras?
  /// The value declared by whoever created the reference; restored on "initial value".
  let initialValue: Value
  /// The key, stored once (a key is usually larger than an existential's inline buffer, so
  /// each copy could cost an allocation too): as a `SharedKey` when changes are saved through
  /// it. The reader and writer views, and the key that issue reports name, are derived from it.
  private let key: StoredKey<Value>?
  /// The value as it was before the running body started (for values that are not word-sized;
  /// `word` keeps theirs), so a nested read or a throwing body has it.
  // nonisolated(unsafe): written and read only by the thread in `gate` while it holds `state`'s
  // lock. @exclusivity(unchecked): that lock already makes every access exclusive; the dynamic
  // check Swift adds to a class's `var` costs two runtime calls per body (the same below).
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var snapshot: Value?
  /// Where the value lives inside `state`'s lock, so a derived value read from inside a running
  /// body sees the value as the body changed it so far. Taken once, in `init`: `Mutex` keeps
  /// its state at a fixed address inside this object (its storage is raw layout, never
  /// moved), and `withLock` hands its body that very address, so the hot path stores nothing.
  // nonisolated(unsafe): set once in `init`, before the reference is shared; the memory it
  // points to is read only by the thread in `gate`, while it holds `state`'s lock.
  nonisolated(unsafe) var valueAddress: UnsafeMutablePointer<Value>?
  /// Where the running body's `withLock` was called (when its caller said), so that a read
  /// of the value from inside the body is reported at the user's line.
  // nonisolated(unsafe): written and read only by the thread in `gate` while it holds `state`'s
  // lock.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var bodyFileID: StaticString?
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var bodyLine: UInt?
  /// `==` if `Value` is `Equatable` at run time (then unchanged values are not re-announced).
  @usableFromInline let isEqual: RuntimeEquality<Value>?
  /// The Observation registrar and what reads pass it, made by the first read (see
  /// `observation`): a reference nobody reads never pays for a registrar's two allocations.
  /// Retained here and released in `deinit`; set once, never replaced.
  @usableFromInline let observers = Atomic<Unmanaged<Observers>?>(nil)

  init(
    initialValue: Value, key: (any SharedReaderKey<Value>)?, livesInReference: Bool,
    writer: (any SharedKey<Value>)? = nil, storedVersion: SharedVersion? = .absent,
    unregister: (@Sendable (ObjectIdentifier) -> Void)? = nil
  ) {
    var state = State(value: initialValue)
    // `storedVersion` is what a preloaded value was loaded at; `.absent` (nothing seen) when the
    // value is still to be loaded.
    if !livesInReference, key != nil {
      state.saves = SaveQueue(stored: storedVersion, throttles: writer is any ThrottledSaveKey)
    }
    self.state = Lock(state)
    self.word = Atomic(Self.isWordSized ? Self.pack(initialValue) : 0)
    self.initialValue = initialValue
    // `writer` is `key` itself, as a `SharedKey`, whenever the holder may save through it.
    self.key = writer.map { .writable($0) } ?? key.map { .readOnly($0) }
    self.livesInReference = livesInReference || key == nil
    self.savesToKey = !self.livesInReference && writer != nil
    self.updatesInPlace = self.livesInReference || writer == nil
    self.isEqual = runtimeEquality(Value.self)
    self.extras = ReferenceExtras.make(recorder: IssueReporting.recorder, unregister: unregister)
    valueAddress = self.state.withLock { state in
      withUnsafeMutablePointer(to: &state.value) { $0 }
    }
  }

  deinit {
    // The last holder is gone: nothing can mutate or save any more. A change still waiting for
    // the save in flight reaches the key before it is told.
    handOverPendingSave()
    let subscription = state.withLock { state in
      defer { state.subscription = nil }
      return state.subscription
    }
    subscription?.cancel()
    extras?.unregister?(ObjectIdentifier(self))
    observers.load(ordering: .acquiring)?.release()
  }

  /// The key to read through, if any.
  var reader: (any SharedReaderKey<Value>)? { key?.reader }
  /// The key to save through, if holders may save.
  var writer: (any SharedKey<Value>)? { key?.writer }

  /// Whether `Value` is `Equatable` at run time.
  @inlinable var isEquatable: Bool { isEqual != nil }

  /// The issue observer of the task that created the reference, naming its key.
  var issueObserver: IssueReporting.Observer {
    IssueReporting.Observer(recorder: extras?.recorder, keyValue: reader)
  }

  var root: AnyObject { self }

  /// Whether an `Equatable` value is unchanged. A plain-data value with the same bytes is
  /// unchanged without calling `==`, and one with different bytes counts as changed (at
  /// worst, such as `0.0` becoming `-0.0`, an equal value is announced once more).
  @inlinable
  func isSame(_ old: Value, _ new: Value) -> Bool {
    if _isPOD(Value.self) { return bitwiseEqual(old, new) }
    return isEqual!.isEqual(old, new)
  }
}

/// The parts of a reference that an in-memory value made outside a test that records issues
/// does not have, kept out of line: such a reference is 32 bytes (one malloc size class)
/// smaller, and any other costs one small allocation more.
final class ReferenceExtras: Sendable {
  /// The recorder of the task that created the reference (reports come from anywhere).
  let recorder: IssueReporting.Recorder?
  /// Removes the registry entry when the reference goes away (the argument is its identity).
  let unregister: (@Sendable (ObjectIdentifier) -> Void)?

  private init(
    recorder: IssueReporting.Recorder?, unregister: (@Sendable (ObjectIdentifier) -> Void)?
  ) {
    self.recorder = recorder
    self.unregister = unregister
  }

  /// The extras, or `nil` if there are none. (Not a failable `init`: a class's allocates the
  /// object before it can fail.)
  static func make(
    recorder: IssueReporting.Recorder?, unregister: (@Sendable (ObjectIdentifier) -> Void)?
  ) -> ReferenceExtras? {
    guard recorder != nil || unregister != nil else { return nil }
    return ReferenceExtras(recorder: recorder, unregister: unregister)
  }
}

/// The key of a reference, stored once.
enum StoredKey<Value: Sendable>: Sendable {
  /// Holders read through the key and never save.
  case readOnly(any SharedReaderKey<Value>)
  /// Holders read through the key and save through it.
  case writable(any SharedKey<Value>)

  var reader: any SharedReaderKey<Value> {
    switch self {
    case .readOnly(let key): key
    case .writable(let key): key
    }
  }

  var writer: (any SharedKey<Value>)? {
    guard case .writable(let key) = self else { return nil }
    return key
  }
}

/// The flag bit of `Reference.gate`.
@usableFromInline
enum ReadGate {
  /// Reads of a word-sized value load `word` without the lock (when no body runs).
  @inlinable static var skipsLock: UInt { 1 }
}
