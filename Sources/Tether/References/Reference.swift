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
/// *drainer*: the thread that makes a change while nobody is draining delivers it, then keeps
/// delivering whatever other threads queued meanwhile (the outbox). A key's `save` or a sink
/// that touches the same value therefore never deadlocks; its own change is queued behind the
/// one being delivered.
@usableFromInline
final class Reference<Value: Sendable>: MutableReference {
  @usableFromInline
  enum Delivery: Sendable {
    /// The value changed to `value` (now at `version`); save it if `save` has a sequence.
    /// `stored` is the key's version it was derived from (captured under the lock the body
    /// ran under).
    case change(version: UInt64, value: Value, save: UInt64?, stored: SharedVersion?)
    /// A listener joined; it gets `value` first.
    case initial(Listener<Value>, Value)
    /// `save()` was called.
    case save(
      Value, stored: SharedVersion?, sequence: UInt64,
      completion: @Sendable (Result<Void, any Error>) -> Void)
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
    @usableFromInline var outbox: [Delivery] = []
    @usableFromInline var subscription: SharedSubscription?
    /// The key's version of the stored value `value` was derived from: set with each value the
    /// key delivers (load, subscription), kept across local changes, handed to every save in
    /// `SaveContext.version`. Read in the critical section that ran the body, so an external
    /// change waiting for the lock cannot slip in between (see DESIGN "Versions").
    @usableFromInline var storedVersion: SharedVersion?
    /// The versions this reference's own saves wrote since the last version delivered by the
    /// key (for keys that resume saves with the version they wrote).
    var lineage = SaveLineage()

    @usableFromInline init(value: Value) { self.value = value }
  }

  // Stored properties are laid out in declaration order: the one-byte ones follow `state` and
  // `snapshot` follows `key`, filling the padding after them (and `State.observable` sits by
  // `isLoading`). An `Int` reference is 280 bytes, not 296: one malloc size class smaller.
  @usableFromInline let state: Lock<State>
  /// Set (inside the lock, right after `State.observable`) by the first read of a word-sized
  /// value. From then on every change notifies Observation, so reads need no lock to mark it.
  @usableFromInline let readsSkipLock = Atomic<Bool>(false)
  /// Who delivers: `idle`, `draining` (a drainer runs and the outbox is empty) or `queued` (a
  /// drainer runs and the outbox holds more). Only a thread holding `state`'s lock moves it
  /// away from `idle` or to `queued`; the drainer alone moves it back to `idle`, and outside
  /// the lock only from `draining`. So a drainer that found nothing queued ends with one
  /// compare-and-exchange instead of a second lock round trip.
  @usableFromInline let drainer = Atomic<UInt8>(DrainerState.idle)
  /// Whether the value's only home is this reference (in-memory and local values): then the
  /// key is never asked to load, subscribe or save.
  let livesInReference: Bool
  /// Whether `writer.save` is called on changes.
  @usableFromInline let savesToKey: Bool
  /// Whether `update` is `withLock`: the value lives only here, or there is no key to write.
  @usableFromInline let updatesInPlace: Bool
  /// For a *word-sized* value (plain data of at most 8 bytes: `Int`, `Bool`, `Double`, a
  /// payload-free enum), a copy of its bytes, rewritten in the same critical section as every
  /// change. Once `readsSkipLock` is set, reads load this word instead of taking the lock.
  @usableFromInline let word: Atomic<UInt64>
  /// The thread running a `withLock` body on this value, or 0. Only that thread writes its id
  /// here (under `state`'s lock, cleared before unlocking), so a thread that reads its own id
  /// holds the lock: its body is touching the value it is mutating.
  @usableFromInline let owner = Atomic<UInt>(0)
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
  // nonisolated(unsafe): written and read only by the `owner` thread while it holds `state`'s
  // lock.
  @usableFromInline nonisolated(unsafe) var snapshot: Value?
  /// `==` if `Value` is `Equatable` at run time (then unchanged values are not re-announced).
  @usableFromInline let isEqual: RuntimeEquality<Value>?
  /// The Observation registrar and what reads pass it, made by the first read (see
  /// `observation`): a reference nobody reads never pays for a registrar's two allocations.
  /// Retained here and released in `deinit`; set once, never replaced.
  @usableFromInline let observers = Atomic<Unmanaged<Observers>?>(nil)

  init(
    initialValue: Value, key: (any SharedReaderKey<Value>)?, livesInReference: Bool,
    writer: (any SharedKey<Value>)? = nil, storedVersion: SharedVersion? = nil,
    unregister: (@Sendable (ObjectIdentifier) -> Void)? = nil
  ) {
    var state = State(value: initialValue)
    state.storedVersion = storedVersion
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
  }

  deinit {
    // The last holder is gone: nothing can mutate or save any more. Tell the key.
    let subscription = state.withLock { state in
      defer { state.subscription = nil }
      return state.subscription
    }
    subscription?.cancel()
    extras?.unregister?(ObjectIdentifier(self))
    observers.load(ordering: .acquiring)?.release()
  }

  /// The key to read through, if any.
  private var reader: (any SharedReaderKey<Value>)? { key?.reader }
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

  // MARK: Reading

  /// The current value, without registering an Observation access.
  @usableFromInline var observedValue: Value {
    if isInsideOwnBody { return nestedRead() }
    return state.withLock { $0.value }
  }

  /// Always inlined, and small: the word-sized read is an Observation access and one atomic
  /// load in the caller. The lazy registrar's extra load and branch made it too large for the
  /// inliner (the call cost `core.read` a third more), so the locked read is out of line.
  @inlinable var value: Value {
    @inline(__always) get {
      observation { $0.registrar.access($0.subject, keyPath: $0.valuePath) }
      // The acquiring load orders this read after the first one's critical section, so any
      // change it can miss has not happened yet and will notify Observation.
      if Self.isWordSized, readsSkipLock.load(ordering: .acquiring) {
        if isInsideOwnBody { return specializedNestedRead() }
        return Self.unpack(word.load(ordering: .acquiring))
      }
      return lockedValue()
    }
  }

  /// `value` after its Observation access, through the lock; the first read marks the value
  /// observable. Inlinable so it is specialized for `Value` in the caller, never inlined.
  @inlinable @inline(never)
  func lockedValue() -> Value {
    if isInsideOwnBody { return specializedNestedRead() }
    return state.withLock { state in
      if !state.observable {
        state.observable = true
        if Self.isWordSized { readsSkipLock.store(true, ordering: .releasing) }
      }
      return state.value
    }
  }

  /// Whether `Value` is plain data that fits in `word`.
  @inlinable static var isWordSized: Bool {
    _isPOD(Value.self) && MemoryLayout<Value>.size <= 8 && MemoryLayout<Value>.alignment <= 8
  }

  /// The bytes of a word-sized value.
  @inlinable static func pack(_ value: Value) -> UInt64 {
    var bits: UInt64 = 0
    withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: value, as: Value.self) }
    return bits
  }

  /// A word-sized value from its bytes.
  @inlinable static func unpack(_ bits: UInt64) -> Value {
    withUnsafeBytes(of: bits) { $0.load(as: Value.self) }
  }

  /// Rewrites `word` after `state.value` changed. Called with `state`'s lock held.
  @inlinable func storeWord(_ value: Value) {
    if Self.isWordSized { word.store(Self.pack(value), ordering: .releasing) }
  }

  var isLoading: Bool {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.isLoading) }
    if isInsideOwnBody { return reportNestedAccess("isLoading", returning: false) }
    return state.withLock { $0.isLoading }
  }

  var loadError: (any Error)? {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.loadError) }
    if isInsideOwnBody { return reportNestedAccess("loadError", returning: nil) }
    return state.withLock { $0.loadError }
  }

  var saveError: (any Error)? {
    observation { $0.registrar.access($0.subject, keyPath: ObservedProperties.saveError) }
    if isInsideOwnBody { return reportNestedAccess("saveError", returning: nil) }
    return state.withLock { $0.saveError }
  }

  // MARK: Touching the value from inside its own withLock

  /// Whether the calling thread is running a `withLock` body of this value. One relaxed load
  /// when no body runs.
  @inlinable var isInsideOwnBody: Bool {
    let owner = owner.load(ordering: .relaxed)
    return owner != 0 && owner == ThreadIdentity.current
  }

  /// The value as it was before the running body started. Called by the `owner` thread only.
  @usableFromInline func valueBeforeBody() -> Value {
    if Self.isWordSized { return Self.unpack(word.load(ordering: .relaxed)) }
    return snapshot!
  }

  /// `nestedRead()`, specialized for `Value` in the caller and never inlined: every way out
  /// of the inlined `value` then returns in registers, where a generic call's result goes
  /// through memory on every read.
  @inlinable @inline(never)
  func specializedNestedRead() -> Value { nestedRead() }

  /// A read from inside the value's own `withLock`: reported, and answered with the value as
  /// it was before the body started (taking the lock again would trap or deadlock).
  @usableFromInline func nestedRead() -> Value {
    reportIssue(
      "\(name) was read inside its own withLock; the read returns the value as it was before "
        + "the body started. Read and change the value through the body's inout argument "
        + "instead.", observer: issueObserver)
    return valueBeforeBody()
  }

  /// A `withLock` from inside the value's own `withLock`: reported; `body` runs on a copy of
  /// the value as it was before the outer body started, and its changes are discarded.
  @usableFromInline
  func nestedWithLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    reportIssue(
      "withLock on \(name) was called inside its own withLock; the inner body ran on a copy "
        + "of the value as it was before the outer body started, and its changes are "
        + "discarded. Change the value through the outer body's inout argument instead.",
      observer: issueObserver)
    var copy = valueBeforeBody()
    return try body(&copy)
  }

  private func reportNestedAccess<T>(_ property: String, returning empty: T) -> T {
    reportIssue(
      "\(property) of \(name) was read inside its own withLock and answers \(empty as Any); "
        + "read it after the body returns.", observer: issueObserver)
    return empty
  }

  /// The value's name in reports: its key, or what made it.
  var name: String {
    guard let reader else { return "a shared value without a key (Shared(value:))" }
    return String(describing: reader)
  }

  // MARK: Mutating

  @inlinable @inline(__always)
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
    try withLock(body, save: savesToKey)
  }

  /// `withLock`, asking the key to save the change only if `save` (the fallback of `update`
  /// saves explicitly instead).
  ///
  /// A body that throws leaves the value as it was: nothing is published or saved. The value
  /// before the body is kept anyway (in `word` for word-sized values, else in `snapshot`) for
  /// comparison and for nested reads, so a body that cannot throw pays nothing for this.
  ///
  /// Always inlined, so the caller's body closure is inlined with it: no indirect call and no
  /// closure context on the stack (this halves `core.withlock`; the slow paths stay out of
  /// line).
  @inlinable @inline(__always)
  func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R, save: Bool) throws(E) -> R {
    let thread = ThreadIdentity.current
    if owner.load(ordering: .relaxed) == thread { return try nestedWithLock(body) }
    var result: R?
    let (observable, drain) = try state.withLock { state throws(E) -> (Bool, DrainStart?) in
      if !Self.isWordSized { snapshot = state.value }
      owner.store(thread, ordering: .relaxed)
      do throws(E) {
        result = try body(&state.value)
      } catch {
        owner.store(0, ordering: .relaxed)
        state.value = valueBeforeBodyEnds()
        throw error
      }
      owner.store(0, ordering: .relaxed)
      let old = valueBeforeBodyEnds()
      storeWord(state.value)
      if isEquatable, isSame(old, state.value) { return (false, nil) }
      return (state.observable, recordChange(&state, save: save))
    }
    if observable { notifyValueObservers() }
    if let drain { self.drain(drain) }
    return result!
  }

  /// Takes the value as it was before the body, after the body returned. Called with `state`'s
  /// lock held, before `word` is rewritten.
  @inlinable func valueBeforeBodyEnds() -> Value {
    if Self.isWordSized { return Self.unpack(word.load(ordering: .relaxed)) }
    defer { snapshot = nil }
    return snapshot!
  }

  /// What the thread that becomes the drainer delivers first.
  @usableFromInline
  struct DrainStart: Sendable {
    @usableFromInline let first: Delivery
    @usableFromInline let listeners: [Listener<Value>]

    @usableFromInline init(first: Delivery, listeners: [Listener<Value>]) {
      self.first = first
      self.listeners = listeners
    }
  }

  /// Records an applied change under the lock and queues its deliveries. Returns what to
  /// deliver if the caller becomes the drainer.
  ///
  /// The common case (nothing to save, nobody listening) is a counter bump, inlined into
  /// `withLock`; queueing is out of line.
  @inlinable @inline(__always)
  func recordChange(_ state: inout State, save: Bool) -> DrainStart? {
    state.version &+= 1
    guard save || !state.listeners.isEmpty else { return nil }
    return queueChange(&state, save: save)
  }

  /// `recordChange`'s queueing part: numbers the save and enqueues the delivery.
  @usableFromInline
  func queueChange(_ state: inout State, save: Bool) -> DrainStart? {
    var sequence: UInt64?
    if save {
      state.saveSequence &+= 1
      sequence = state.saveSequence
    }
    return enqueue(
      .change(
        version: state.version, value: state.value, save: sequence, stored: state.storedVersion),
      in: &state)
  }

  /// Called with `state`'s lock held.
  @inlinable
  func enqueue(_ delivery: Delivery, in state: inout State) -> DrainStart? {
    while true {
      let current = drainer.load(ordering: .acquiring)
      let next = current == DrainerState.idle ? DrainerState.draining : DrainerState.queued
      // Only the drainer changes the state concurrently (`draining` to `idle`), so this
      // retries at most once.
      guard
        current == next
          || drainer.compareExchange(
            expected: current, desired: next, ordering: .acquiringAndReleasing
          ).exchanged
      else { continue }
      if current == DrainerState.idle {
        return DrainStart(first: delivery, listeners: state.listeners)
      }
      state.outbox.append(delivery)
      return nil
    }
  }

  @inlinable
  func drain(_ start: DrainStart) {
    deliver(start.first, to: start.listeners)
    // Nothing queued meanwhile (the common case): done without taking the lock again.
    if drainer.compareExchange(
      expected: DrainerState.draining, desired: DrainerState.idle,
      ordering: .acquiringAndReleasing
    ).exchanged {
      return
    }
    var batch: [Delivery] = []
    while true {
      let listeners = state.withLock { state -> [Listener<Value>]? in
        guard !state.outbox.isEmpty else {
          // Under the lock nobody else can move the state, so a plain store ends draining.
          drainer.store(DrainerState.idle, ordering: .releasing)
          // Keep the larger buffer in the state so steady traffic allocates nothing.
          if batch.capacity > state.outbox.capacity { swap(&state.outbox, &batch) }
          return nil
        }
        swap(&state.outbox, &batch)
        drainer.store(DrainerState.draining, ordering: .releasing)
        return state.listeners
      }
      guard let listeners else { return }
      for delivery in batch { deliver(delivery, to: listeners) }
      batch.removeAll(keepingCapacity: true)
    }
  }

  @inlinable
  func deliver(_ delivery: Delivery, to listeners: [Listener<Value>]) {
    switch delivery {
    case .change(let version, let value, let save, let stored):
      // The save is handed to the key before any listener hears of the change: a process that
      // exits as soon as it sees its own value (at-exit flushing writes what keys were given)
      // must not lose the write.
      if let save {
        callSave(
          value, context: SaveContext(.didSet, version: stored), sequence: save, completion: nil)
      }
      // `listeners` keeps every listener alive; borrowing them spares a retain and a release
      // per listener per change.
      listeners.withUnsafeBufferPointer { buffer in
        for index in buffer.indices {
          Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { listener in
            if listener.joinedAt < version { listener.receive(value) }
          }
        }
      }
    case .initial(let listener, let value):
      listener.receive(value)
    case .save(let value, let stored, let sequence, let completion):
      callSave(
        value, context: SaveContext(.userInitiated, version: stored), sequence: sequence,
        completion: completion)
    }
  }

  @usableFromInline
  func callSave(
    _ value: Value, context: SaveContext, sequence: UInt64,
    completion: (@Sendable (Result<Void, any Error>) -> Void)?
  ) {
    guard let writer else {
      completion?(.success(()))
      return
    }
    // A version only this reference's own saves replaced since: go on over the newest of them.
    var context = context
    if let derived = context.version {
      context.version = state.withLock { $0.lineage.base(derivedFrom: derived) }
    }
    let base = context.version
    // Weak: a pending save must not keep the reference alive, or releasing the last holder
    // would not cancel the subscription, which is the key's cue to flush pending writes.
    let continuation = SaveContinuation(
      observer: issueObserver,
      // A retry the key reports after this save failed is its outcome, unless a later save has
      // reported since (the guard in `finishSave`).
      resolvedLater: { [weak self] in self?.finishSave(sequence: sequence, result: $0) },
      versioned: { [weak self] outcome in
        if let written = outcome.version, case .success = outcome.outcome {
          self?.state.withLock { $0.lineage.ownWrite(derivedFrom: base, wrote: written) }
        }
        self?.finishSave(sequence: sequence, result: outcome.outcome)
        completion?(outcome.outcome)
      })
    writer.save(value, context: context, continuation: continuation)
  }

  @usableFromInline
  func finishSave(sequence: UInt64, result: Result<Void, any Error>) {
    let changed = state.withLock { state -> Bool in
      // A slow early save must not overwrite the outcome of a later one.
      guard sequence >= state.saveResultSequence else { return false }
      state.saveResultSequence = sequence
      let hadError = state.saveError != nil
      if case .failure(let error) = result {
        state.saveError = error
        return true
      }
      state.saveError = nil
      return hadError
    }
    if changed { notifyObservation(ObservedProperties.saveError) }
  }

  /// Clears `saveError` after a successful `update`, as a successful save does.
  func clearSaveError() {
    let changed = state.withLock { state -> Bool in
      guard state.saveError != nil else { return false }
      state.saveError = nil
      state.saveResultSequence = state.saveSequence
      return true
    }
    if changed { notifyObservation(ObservedProperties.saveError) }
  }

  func save() async throws {
    guard savesToKey else { return }
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let drain = state.withLock { state -> DrainStart? in
        state.saveSequence &+= 1
        let delivery = Delivery.save(
          state.value, stored: state.storedVersion, sequence: state.saveSequence,
          completion: { continuation.resume(with: $0) })
        return enqueue(delivery, in: &state)
      }
      if let drain { self.drain(drain) }
    }
  }

  // MARK: Updating atomically where the value lives

  /// Applies `body` atomically where the value is stored (see `Shared.update`).
  ///
  /// A value that lives only here is updated under the lock, exactly like `withLock`. A key
  /// that conforms to `AtomicSharedKey` applies `body` in its storage; the value it stored
  /// becomes this reference's value without being saved again. Any other key gets `withLock`
  /// followed by an explicit save: atomic among this process's holders only.
  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    if updatesInPlace { return try withLock(body) }
    guard let atomic = writer as? any AtomicSharedKey<Value> else {
      let result = try withLock(body, save: false)
      try await save()
      return result
    }
    return try await withoutActuallyEscaping(body) { body in
      // The key may keep the transform after it resumes; the run drops `body` when it ends,
      // which is what lets `body` stay non-escaping for the caller.
      let run = UpdateRun(body)
      defer { run.end() }
      let observer = issueObserver
      // The stored value is applied when the key resumes, not after the `await`: a key resumes
      // its updates in the order it stored them, and the tasks waking from `await` do not keep
      // that order (the holder of 60 stored increments ended at 59 when the task of the 59th
      // woke last).
      _ = try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        atomic.update(
          { try run.apply(to: &$0) }, initialValue: initialValue,
          continuation: UpdateContinuation(observer: observer) { result in
            if case .success(let stored) = result {
              self.apply(stored, clearingLoadError: false, onlyIfVersion: nil, endLoading: false)
              // The update stored a value: an earlier save's failure no longer describes the
              // storage (a conflict once reported stuck after a later successful update).
              self.clearSaveError()
            }
            continuation.resume(with: result.map { _ in })
          })
      }
      return try run.result()
    }
  }

  // MARK: Observing

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    addReceiver(ClosureReceiver(receive))
  }

  func addReceiver(_ receiver: any ValueReceiver<Value>) -> ListenerToken {
    let (listener, drain) = state.withLock { state -> (Listener<Value>, DrainStart?) in
      let listener = Listener(joinedAt: state.version, receiver: receiver)
      state.listeners.append(listener)
      return (listener, enqueue(.initial(listener, state.value), in: &state))
    }
    if let drain { self.drain(drain) }
    return ListenerToken { [self] in
      guard listener.markCancelled() else { return }
      state.withLock { state in
        state.listeners.removeAll { $0 === listener }
      }
    }
  }

  func announceValueChange() { notifyValueObservers() }
  func announceLoadError() { notifyObservation(ObservedProperties.loadError) }

  /// Tells Observation trackers of `keyPath` that it changed. Without a registrar nothing
  /// ever read the reference, so no tracker can be watching it.
  @inlinable
  func notifyObservation(_ keyPath: KeyPath<ObservedProperties, Void> & Sendable) {
    guard let observers = self.observers.load(ordering: .acquiring) else { return }
    observers._withUnsafeGuaranteedRef {
      $0.registrar.withMutation(of: $0.subject, keyPath: keyPath) {}
    }
  }

  /// `notifyObservation` of the value, with the key path kept in `Observers`.
  @inlinable
  func notifyValueObservers() {
    guard let observers = self.observers.load(ordering: .acquiring) else { return }
    observers._withUnsafeGuaranteedRef {
      $0.registrar.withMutation(of: $0.subject, keyPath: $0.valuePath) {}
    }
  }

  /// Runs `body` with the registrar, making it on first use.
  ///
  /// Every read registers through here before it reads the value, and every change notifies
  /// after it changed the value (under the lock, or in `word`), so a tracker that read the
  /// old value made the registrar before the change looked for it.
  @inlinable @inline(__always)
  func observation(_ body: (Observers) -> Void) {
    let observers = self.observers.load(ordering: .acquiring) ?? makeObservers()
    observers._withUnsafeGuaranteedRef(body)
  }

  /// Makes the registrar once; a thread that loses the race uses the winner's.
  @usableFromInline @inline(never)
  func makeObservers() -> Unmanaged<Observers> {
    let made = Unmanaged.passRetained(Observers())
    let (exchanged, original) = observers.compareExchange(
      expected: nil, desired: made, ordering: .acquiringAndReleasing)
    if exchanged { return made }
    made.release()
    return original!
  }

  // MARK: Loading

  /// Loads with `.initialValue` and subscribes. Called once, right after creation, outside
  /// any lock. Without a key (or for in-memory values) there is nothing to do.
  func start(skipLoad: Bool = false) {
    guard let reader, !livesInReference else { return }
    if !skipLoad {
      let version = beginLoad()
      reader.load(
        context: .initialValue(initialValue),
        continuation: LoadContinuation(
          observer: issueObserver,
          versioned: { [weak self] loaded in
            self?.finishLoad(
              loaded.outcome, storedVersion: loaded.version, startedAt: version, initial: true)
          }))
    }
    let subscription = reader.subscribe(
      context: .initialValue(initialValue),
      subscriber: SharedSubscriber(
        versioned: { [weak self] event, stored in self?.handle(event, storedVersion: stored) }))
    let replaced = state.withLock { state in
      defer { state.subscription = subscription }
      return state.subscription
    }
    replaced?.cancel()
  }

  private func beginLoad() -> UInt64 {
    let (version, changed) = state.withLock { state in
      defer { state.isLoading = true }
      return (state.version, !state.isLoading)
    }
    if changed { notifyObservation(ObservedProperties.isLoading) }
    return version
  }

  func load() async throws {
    guard let reader, !livesInReference else { return }
    let version = beginLoad()
    let observer = issueObserver
    let loaded = await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<Value?, any Error>>, Never>) in
      reader.load(
        context: .userInitiated,
        continuation: LoadContinuation(
          observer: observer, versioned: { continuation.resume(returning: $0) }))
    }
    finishLoad(loaded.outcome, storedVersion: loaded.version, startedAt: version, initial: false)
    if case .failure(let error) = loaded.outcome { throw error }
  }

  /// Applies a load result. A result is dropped if the value changed since the load began
  /// (a newer write or external update wins over an older read).
  func finishLoad(
    _ result: Result<Value?, any Error>, storedVersion: SharedVersion?, startedAt version: UInt64,
    initial: Bool
  ) {
    switch result {
    case .success(let loaded):
      apply(
        loaded ?? (initial ? nil : initialValue), clearingLoadError: true,
        onlyIfVersion: version, endLoading: true, storedVersion: .some(storedVersion))
    case .failure(let error):
      setLoadError(error, endLoading: true)
    }
  }

  /// Takes a value a caller loaded from the key itself (`init(require:)`).
  func applyLoaded(_ value: Value, storedVersion: SharedVersion?) {
    apply(
      value, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
      storedVersion: .some(storedVersion))
  }

  private func handle(_ event: SharedSubscriber<Value>.Event, storedVersion: SharedVersion?) {
    switch event {
    case .value(let value):
      apply(
        value, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
        storedVersion: .some(storedVersion))
    case .initialValue:
      apply(
        initialValue, clearingLoadError: true, onlyIfVersion: nil, endLoading: false,
        storedVersion: .some(storedVersion))
    case .failure(let error):
      setLoadError(error, endLoading: false)
    case .loading(let loading):
      let changed = state.withLock { state in
        defer { state.isLoading = loading }
        return state.isLoading != loading
      }
      if changed { notifyObservation(ObservedProperties.isLoading) }
    }
  }

  private struct ApplyOutcome: Sendable {
    var valueChanged = false
    var observable = false
    var errorCleared = false
    var loadingEnded = false
    var drain: DrainStart?
  }

  /// Replaces the value from storage: notifies, never saves back.
  ///
  /// `storedVersion` (when given) is the key's version of the delivered value: it replaces the
  /// reference's in the same critical section, even if the value is equal, unless the load
  /// is stale.
  private func apply(
    _ newValue: Value?, clearingLoadError: Bool, onlyIfVersion version: UInt64?,
    endLoading: Bool, storedVersion: SharedVersion?? = nil
  ) {
    let outcome = state.withLock { state -> ApplyOutcome in
      if let storedVersion, version == nil || version == state.version {
        state.storedVersion = storedVersion
        state.lineage.external(storedVersion)
      }
      var outcome = ApplyOutcome()
      outcome.observable = state.observable
      if endLoading, state.isLoading {
        state.isLoading = false
        outcome.loadingEnded = true
      }
      if clearingLoadError, state.loadError != nil {
        state.loadError = nil
        outcome.errorCleared = true
      }
      guard let newValue, version == nil || version == state.version else { return outcome }
      if isEquatable, isSame(state.value, newValue) { return outcome }
      state.value = newValue
      storeWord(newValue)
      outcome.valueChanged = true
      outcome.drain = recordChange(&state, save: false)
      return outcome
    }
    if outcome.loadingEnded { notifyObservation(ObservedProperties.isLoading) }
    if outcome.errorCleared { notifyObservation(ObservedProperties.loadError) }
    if outcome.valueChanged, outcome.observable { notifyObservation(ObservedProperties.value) }
    if let drain = outcome.drain { self.drain(drain) }
  }

  private func setLoadError(_ error: any Error, endLoading: Bool) {
    let loadingEnded = state.withLock { state -> Bool in
      state.loadError = error
      guard endLoading, state.isLoading else { return false }
      state.isLoading = false
      return true
    }
    notifyObservation(ObservedProperties.loadError)
    if loadingEnded { notifyObservation(ObservedProperties.isLoading) }
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

/// A reference's Observation registrar, made when the reference is first read.
@usableFromInline
final class Observers: Sendable {
  /// `ObservedProperties.subject` and `.value`, kept here so reads skip the statics' accessors.
  /// Before `registrar`, whose size Observation decides at run time: their offsets are then
  /// constants in an inlined read, where fields after it are looked up.
  @usableFromInline let subject = ObservedProperties.subject
  @usableFromInline let valuePath = ObservedProperties.value
  @usableFromInline let registrar = ObservationRegistrar()

  init() {}
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

/// The values of `Reference.drainer`.
@usableFromInline
enum DrainerState {
  @inlinable static var idle: UInt8 { 0 }
  @inlinable static var draining: UInt8 { 1 }
  @inlinable static var queued: UInt8 { 2 }
}

/// One `update`: the caller's body, and the result of the latest run (the one the key applied,
/// since a key runs the transform again only after a conflict discarded the previous run).
final class UpdateRun<Value, R: Sendable>: Sendable {
  private struct State {
    var body: (@Sendable (inout Value) throws -> R)?
    var result: R?
  }
  private let state: Lock<State>

  init(_ body: @escaping @Sendable (inout Value) throws -> R) {
    state = Lock(State(body: body))
  }

  /// Runs the body (outside the lock: it is the caller's code) and keeps its result.
  func apply(to value: inout Value) throws {
    guard let body = state.withLock({ $0.body }) else { throw UpdateEnded() }
    let result = try body(&value)
    state.withLock { $0.result = result }
  }

  /// The result of the run the key applied.
  func result() throws -> R {
    guard let result = state.withLock({ $0.result }) else { throw UpdateEnded() }
    return result
  }

  /// Drops the body: a key that calls the transform after resuming gets an error.
  func end() { state.withLock { $0.body = nil } }
}

/// The error a key gets when it runs an update's transform after the update ended.
struct UpdateEnded: Error, CustomStringConvertible {
  var description: String { "The update already ended; its transform can no longer run." }
}
