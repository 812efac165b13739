import Synchronization

/// The references of one storage scope, by key type and key id.
///
/// Entries are weak, so a reference lives exactly as long as something holds it, except for
/// values whose only home is the reference (in-memory keys): those are held strongly for the
/// lifetime of the scope.
final class ReferenceRegistry: Sendable {
  /// The identity of a key: its type and its `id`.
  struct Key: Hashable, Sendable {
    let type: ObjectIdentifier
    let id: SendableHashable
  }

  private enum Entry {
    case weak(WeakReference)
    case strong(any AnyRegisteredReference)

    var object: (any AnyRegisteredReference)? {
      switch self {
      case .weak(let box): box.object
      case .strong(let object): object
      }
    }
  }

  private struct WeakReference {
    weak var object: (any AnyRegisteredReference)?
  }

  private let entries = Lock<[Key: Entry]>([:])

  /// Returns the reference for `key`, creating, loading and subscribing it if there is none.
  ///
  /// `initialValue` is evaluated only when a new reference is created. A later declaration's
  /// default is ignored while a reference exists.
  func reference<K: SharedReaderKey>(
    for key: K, initialValue: () -> K.Value, preloaded: Bool = false
  ) -> Reference<K.Value> {
    let traits = KeyTraits(key)
    let registryKey = Key(type: traits.registryType, id: SendableHashable(key.id))
    if let existing = lookUp(registryKey, as: K.Value.self, key: key) { return existing }

    // Build outside the lock: `initialValue` is the caller's code.
    let candidate = Reference<K.Value>(
      initialValue: initialValue(), key: key, livesInReference: traits.pinned,
      registry: self, registryKey: registryKey)
    let winner = entries.withLock { entries -> (any AnyRegisteredReference)? in
      if let existing = entries[registryKey]?.object { return existing }
      entries[registryKey] =
        traits.pinned ? .strong(candidate) : .weak(WeakReference(object: candidate))
      return nil
    }
    guard let winner else {
      candidate.start(skipLoad: preloaded)
      return candidate
    }
    // Another task created it first; ours was never started, so the key saw nothing.
    if let reference = winner as? Reference<K.Value> { return reference }
    return mismatch(key, candidate: candidate)
  }

  /// Loads `key` first and returns its reference holding the loaded value.
  ///
  /// - Throws: The load error, or `SharedLoadError.notFound` if the key has no stored value.
  func requireReference<K: SharedReaderKey>(for key: K) async throws -> Reference<K.Value> {
    let observer = IssueReporting.observer
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<K.Value?, any Error>, Never>) in
      key.load(
        context: .userInitiated,
        continuation: LoadContinuation(observer: observer) { continuation.resume(returning: $0) })
    }
    guard let loaded = try result.get() else { throw SharedLoadError.notFound }
    if let existing = existing(for: key) {
      existing.applyLoaded(loaded)
      return existing
    }
    return reference(for: key, initialValue: { loaded }, preloaded: true)
  }

  /// The live reference for `key`, if any.
  func existing<K: SharedReaderKey>(for key: K) -> Reference<K.Value>? {
    let registryKey = Key(type: KeyTraits(key).registryType, id: SendableHashable(key.id))
    return lookUp(registryKey, as: K.Value.self, key: key)
  }

  private func lookUp<K: SharedReaderKey, Value>(
    _ registryKey: Key, as _: Value.Type, key: K
  ) -> Reference<Value>? {
    // The strong reference is returned out of the lock so its release never happens inside.
    guard let object = entries.withLock({ $0[registryKey]?.object }) else { return nil }
    if let reference = object as? Reference<Value> { return reference }
    return nil
  }

  private func mismatch<K: SharedReaderKey>(
    _ key: K, candidate: Reference<K.Value>
  )
    -> Reference<K.Value>
  {
    reportIssue(
      "\(key) is already shared with a different value type; this holder gets its own value.")
    return candidate
  }

  /// Removes the entry for `key` if it still belongs to the reference being destroyed.
  func remove(_ key: Key, ifIdenticalTo identity: ObjectIdentifier) {
    entries.withLock { entries in
      guard case .weak(let box)? = entries[key] else { return }
      if let object = box.object, ObjectIdentifier(object) != identity { return }
      entries[key] = nil
    }
  }
}

/// A reference as the registry stores it.
protocol AnyRegisteredReference: AnyObject, Sendable {}
extension Reference: AnyRegisteredReference {}

/// A hashable key id, type-erased. Safe to share: it is built only from `Sendable` ids.
struct SendableHashable: Hashable, @unchecked Sendable {
  let base: AnyHashable
  init(_ base: some Hashable & Sendable) { self.base = AnyHashable(base) }
}
