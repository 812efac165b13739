import Streams
import Synchronization
import TetherSupport

/// One holder of a shared value (a `Shared` or `SharedReader` and its copies): the reference
/// it reads and writes now, which `load(_:)` can re-point at another key.
///
/// Every call forwards to the current reference. Until the first re-key that is the reference
/// the holder started with, read without a lock; `Shared` goes one step further and reads the
/// starting reference directly (see `Shared.root`), checking only `rekeyed`. After a re-key the
/// current reference is read under this holder's lock.
///
/// The starting reference stays alive as long as the holder, also after a re-key, because
/// `Shared.root` points at it unretained and a reader on another thread may have checked
/// `rekeyed` just before it was set. References after it are released when replaced.
@usableFromInline
final class Holder<Value: Sendable>: MutableReference {
  struct Target: Sendable {
    let reader: any ReaderReference<Value>
    let writer: (any MutableReference<Value>)?
  }

  /// What a re-key changed: the current target (`nil` until a re-key succeeded) and the error
  /// of the latest failed one. Replaced whole, never mutated.
  /// The reference a holder starts with: one field for both views (an enum of two class
  /// existentials fits in two words, where a reader and an optional writer took four).
  enum Initial: Sendable {
    case readOnly(any ReaderReference<Value>)
    case writable(any MutableReference<Value>)

    var target: Target {
      switch self {
      case .readOnly(let reader): Target(reader: reader, writer: nil)
      case .writable(let writer): Target(reader: writer, writer: writer)
      }
    }
  }

  @usableFromInline
  final class Rekeying: Sendable {
    let current: Target?
    let loadError: (any Error)?
    /// The current reference, typed, so `Shared` reads and writes it specialized.
    @usableFromInline let root: Reference<Value>?
    /// How many `load(_:)` calls are waiting for their key: the holder is loading meanwhile.
    let inFlight: Int

    init(current: Target?, root: Reference<Value>?, loadError: (any Error)?, inFlight: Int = 0) {
      self.current = current
      self.loadError = loadError
      self.root = root
      self.inFlight = inFlight
    }

    /// This state with `change` added to `inFlight`, and `loadError` replaced if given.
    func counting(_ change: Int, loadError: (any Error)?? = nil) -> Rekeying {
      Rekeying(
        current: current, root: root, loadError: loadError ?? self.loadError,
        inFlight: inFlight + change)
    }
  }

  // Every Shared creates a holder, so its stored state avoids types built from `Value` at run
  // time (a generic tuple in a lock costs metadata lookups on every creation): the re-key
  // state lives in a `Rekeying` object made only when someone re-keys.
  private let initial: Initial
  /// A `Rekeying`, once a re-key was tried.
  @usableFromInline let rekeying = Lock<AnyObject?>(nil)
  /// Set once, by the first successful re-key; never cleared. After `rekeying`, so it fills
  /// the lock's padding: a holder is 50 bytes, one malloc size class below 57.
  @usableFromInline let rekeyed = Atomic<Bool>(false)

  /// Whether `load(_:)` re-pointed this holder. A relaxed load: a reader that misses a re-key
  /// in progress reads the old key's value, as it would have a moment earlier.
  @inlinable var isRekeyed: Bool { rekeyed.load(ordering: .relaxed) }

  /// The reference a re-keyed holder uses now (a re-key always points at a root), retained
  /// for the caller: one lock round trip.
  @inlinable var currentRoot: Reference<Value>? {
    guard let state = rekeying.withLock({ $0 }) else { return nil }
    return unsafeDowncast(state, to: Rekeying.self).root
  }

  init(_ reference: any MutableReference<Value>) {
    initial = .writable(reference)
  }

  init(readOnly reference: any ReaderReference<Value>) {
    initial = .readOnly(reference)
  }

  private var state: Rekeying? {
    guard let state = rekeying.withLock({ $0 }) else { return nil }
    return unsafeDowncast(state, to: Rekeying.self)
  }

  private var target: Target {
    guard rekeyed.load(ordering: .acquiring), let current = state?.current else {
      return initial.target
    }
    return current
  }

  private var writer: any MutableReference<Value> {
    guard let writer = target.writer else {
      preconditionFailure("a read-only value cannot be mutated")  // unreachable: no API
    }
    return writer
  }

  var root: AnyObject { target.reader.root }
  var value: Value { target.reader.value }
  var valueForDerived: Value { target.reader.valueForDerived }

  /// Whether the current reference is loading, or a `load(_:)` is waiting for its key. Reads
  /// the reference's first, so Observation tracks it; a re-key announces through it.
  var isLoading: Bool {
    let reader = target.reader
    if reader.isLoading { return true }
    return (state?.inFlight ?? 0) > 0
  }
  var saveError: (any Error)? { target.writer?.saveError }

  /// The error of a failed re-key, else the current reference's.
  var loadError: (any Error)? {
    if let error = state?.loadError { return error }
    return target.reader.loadError
  }

  func load() async throws {
    try await target.reader.load()
    if state?.loadError != nil {
      replaceState {
        $0?.counting(0, loadError: .some(nil)) ?? Rekeying(current: nil, root: nil, loadError: nil)
      }
    }
  }

  /// Replaces the re-key state with what `change` makes of it, in one critical section.
  private func replaceState(_ change: (Rekeying?) -> Rekeying) {
    rekeying.withLock { state in
      state = change(state.map { unsafeDowncast($0, to: Rekeying.self) })
    }
  }

  func save() async throws { try await writer.save() }

  func withLock<R, E: Error>(
    _ body: (inout Value) throws(E) -> R, fileID: StaticString?, line: UInt?
  ) throws(E) -> R {
    try writer.withLock(body, fileID: fileID, line: line)
  }

  func update<R: Sendable>(_ body: @Sendable (inout Value) throws -> R) async throws -> R {
    try await writer.update(body)
  }

  func addListener(_ receive: @escaping @Sendable (Value) -> Void) -> ListenerToken {
    target.reader.addListener(receive)
  }

  func addReceiver(_ receiver: any ValueReceiver<Value>) -> ListenerToken {
    target.reader.addReceiver(receiver)
  }

  func announceValueChange() { target.reader.announceValueChange() }
  func announceLoadError() { target.reader.announceLoadError() }
  func announceLoading() { target.reader.announceLoading() }

  /// Points this holder at `key`: loads it first, and only if that succeeds joins (or creates)
  /// the key's reference in the current storage scope and makes it current.
  ///
  /// A value the key loads replaces the reference's value; if nothing is stored, a new
  /// reference starts from `defaultValue` (the key's own default, else this holder's value
  /// now) and an existing one keeps its value. A failed load sets this holder's `loadError`,
  /// throws, and leaves the holder where it was.
  func load<K: SharedReaderKey<Value>>(
    _ key: K, writer: () -> (any SharedKey<Value>)?, defaultValue: Value?, writable: Bool
  ) async throws {
    let previous = target
    let registry = SharedStorage.current.registry
    let reference: Reference<Value>
    if KeyTraits.of(K.self).pinned {
      // The value lives in its reference (in memory): joining or creating it is the load.
      reference = registry.reference(
        for: key, writer: writer, initialValue: { defaultValue ?? previous.reader.value })
    } else {
      beginRekey(previous)
      do {
        reference = try await loadReference(
          for: key, writer: writer, initialValue: defaultValue ?? previous.reader.value,
          in: registry)
      } catch {
        previous.reader.announceLoading()
        throw error
      }
    }
    let pinned = KeyTraits.of(K.self).pinned
    replaceState { state in
      Rekeying(
        current: Target(reader: reference, writer: writable ? reference : nil), root: reference,
        loadError: nil, inFlight: (state?.inFlight ?? 0) - (pinned ? 0 : 1))
    }
    rekeyed.store(true, ordering: .releasing)
    // Whoever tracked the old value or loading state (Observation) re-reads and now sees the
    // new key's.
    previous.reader.announceValueChange()
    if !pinned { previous.reader.announceLoading() }
  }

  /// Marks a re-key in flight: `isLoading` answers `true` until it ends.
  private func beginRekey(_ previous: Target) {
    replaceState {
      $0?.counting(1) ?? Rekeying(current: nil, root: nil, loadError: nil, inFlight: 1)
    }
    previous.reader.announceLoading()
  }

  /// Loads `key` and returns its reference holding the loaded value; a failed load sets this
  /// holder's `loadError` and throws.
  private func loadReference<K: SharedReaderKey<Value>>(
    for key: K, writer: () -> (any SharedKey<Value>)?, initialValue: Value,
    in registry: ReferenceRegistry
  ) async throws -> Reference<Value> {
    let versioned = await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<Value?, any Error>>, Never>) in
      key.load(
        context: .initialValue(initialValue),
        continuation: LoadContinuation(
          observer: IssueReporting.observer, versioned: { continuation.resume(returning: $0) }))
    }
    let loaded: Value?
    switch versioned.outcome {
    case .success(let value): loaded = value
    case .failure(let error):
      replaceState { $0!.counting(-1, loadError: .some(error)) }
      target.reader.announceLoadError()
      throw error
    }
    if let existing = registry.existing(for: key) {
      if let loaded { existing.applyLoaded(loaded, storedVersion: versioned.version) }
      return existing
    }
    return registry.reference(
      for: key, writer: writer, initialValue: { loaded ?? initialValue }, preloaded: true,
      storedVersion: versioned.version)
  }
}
