import Streams
import TetherSupport

/// The references of one storage scope, by key type and key id.
///
/// Entries are weak, so a reference lives exactly as long as something holds it, except for
/// values whose only home is the reference (in-memory keys): those are held strongly for the
/// lifetime of the scope.
///
/// Each key type has its own table typed by its `ID`, so a lookup hashes and compares the id
/// directly (an `AnyHashable` key would cost a dynamic cast per comparison).
final class ReferenceRegistry: Sendable {
  private let tables = Lock<[ObjectIdentifier: AnyKeyTable]>([:])

  /// Returns the reference for `key`, creating, loading and subscribing it if there is none.
  ///
  /// `initialValue` and `writer` are evaluated only when a new reference is created. A later
  /// declaration's default is ignored while a reference exists.
  func reference<K: SharedReaderKey>(
    for key: K, writer: () -> (any SharedKey<K.Value>)?, initialValue: () -> K.Value,
    preloaded: Bool = false, storedVersion: SharedVersion? = .absent
  ) -> Reference<K.Value> {
    let traits = KeyTraits.of(K.self)
    let id = KeyID(key.id)
    if let existing = lookUp(id, in: traits.registryType, as: K.Value.self) { return existing }

    // Build outside the lock: `initialValue` is the caller's code.
    // A pinned entry is never removed, so its reference needs no way to unregister (and saves
    // the closure's allocation).
    var unregister: (@Sendable (ObjectIdentifier) -> Void)?
    if !traits.pinned {
      unregister = { [weak self] identity in
        self?.remove(id, in: traits.registryType, ifIdenticalTo: identity)
      }
    }
    let candidate = Reference<K.Value>(
      initialValue: initialValue(), key: key, livesInReference: traits.pinned, writer: writer(),
      storedVersion: storedVersion, unregister: unregister)
    let winner = tables.withLock { tables -> (any RegisteredReference)? in
      let table = Self.table(for: traits.registryType, idType: KeyID<K.ID>.self, in: &tables)
      if let existing = table.object(for: id) { return existing }
      table.insert(candidate, for: id, pinned: traits.pinned)
      return nil
    }
    guard let winner else {
      candidate.start(skipLoad: preloaded)
      return candidate
    }
    // Another task created it first; ours was never started, so the key saw nothing.
    if let reference = winner as? Reference<K.Value> { return reference }
    reportIssue(
      "This key is already shared with a different value type (not \(K.Value.self)); this holder gets its own value.",
      key: key)
    return candidate
  }

  /// Loads `key` first and returns its reference holding the loaded value.
  ///
  /// - Throws: The load error, or `SharedLoadError.notFound(key:)` if the key has no stored value.
  func requireReference<K: SharedReaderKey>(
    for key: K, writer: () -> (any SharedKey<K.Value>)?
  ) async throws -> Reference<K.Value> {
    let observer = IssueReporting.observer(naming: key)
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Versioned<Result<K.Value?, any Error>>, Never>) in
      key.load(
        context: .userInitiated,
        continuation: LoadContinuation(
          observer: observer, versioned: { continuation.resume(returning: $0) }))
    }
    guard let loaded = try result.outcome.get() else {
      throw SharedLoadError.notFound(key: "\(key)")
    }
    if let existing = existing(for: key) {
      existing.applyLoaded(loaded, storedVersion: result.version)
      return existing
    }
    return reference(
      for: key, writer: writer, initialValue: { loaded }, preloaded: true,
      storedVersion: result.version)
  }

  /// The live reference for `key`, if any.
  func existing<K: SharedReaderKey>(for key: K) -> Reference<K.Value>? {
    lookUp(KeyID(key.id), in: KeyTraits.of(K.self).registryType, as: K.Value.self)
  }

  private func lookUp<ID: Hashable & Sendable, Value>(
    _ id: ID, in type: ObjectIdentifier, as _: Value.Type
  ) -> Reference<Value>? {
    // The strong reference is returned out of the lock so its release never happens inside.
    let object = tables.withLock { tables -> (any RegisteredReference)? in
      guard let table = tables[type] else { return nil }
      return unsafeDowncast(table, to: KeyTable<ID>.self).object(for: id)
    }
    return object as? Reference<Value>
  }

  /// Removes the entry for `id` if it still belongs to the reference being destroyed.
  private func remove<ID: Hashable & Sendable>(
    _ id: ID, in type: ObjectIdentifier, ifIdenticalTo identity: ObjectIdentifier
  ) {
    tables.withLock { tables in
      guard let table = tables[type].map({ unsafeDowncast($0, to: KeyTable<ID>.self) }),
        let entry = table.weak[id]
      else { return }
      if let object = entry.object, ObjectIdentifier(object) != identity { return }
      table.weak[id] = nil
    }
  }

  private static func table<ID: Hashable & Sendable>(
    for type: ObjectIdentifier, idType _: ID.Type, in tables: inout [ObjectIdentifier: AnyKeyTable]
  ) -> KeyTable<ID> {
    if let table = tables[type] { return unsafeDowncast(table, to: KeyTable<ID>.self) }
    let table = KeyTable<ID>()
    tables[type] = table
    return table
  }
}

/// A key's id as the registry stores it.
///
/// A key's `ID` only has to be `Hashable` (as in swift-sharing), so it may not be `Sendable`.
// @unchecked: the id is computed from a `Sendable` key and never mutated; it is hashed and
// compared only inside `ReferenceRegistry.tables`' lock.
struct KeyID<ID: Hashable>: Hashable, @unchecked Sendable {
  let id: ID
  init(_ id: ID) { self.id = id }
}

/// A reference as the registry stores it: one word (a protocol with a witness table would
/// make every entry of every table a word larger).
typealias RegisteredReference = AnyObject & Sendable

/// The entries of one key type. Every key type maps to exactly one `ID` type (a `.Default`
/// key shares its base key's table and has the same `ID`), which makes the downcasts exact.
// @unchecked: no stored state; the subclass is touched only inside `ReferenceRegistry.tables`'
// lock.
class AnyKeyTable: @unchecked Sendable {}

/// The entries of one key type, by id: strong for values that live in their reference, weak
/// for the others. A key type is one or the other, so one of the two stays empty; keeping them
/// apart spares every entry the word of the kind it is not.
final class KeyTable<ID: Hashable & Sendable>: AnyKeyTable, @unchecked Sendable {
  // @unchecked: `pinned` and `weak` are read and written only inside
  // `ReferenceRegistry.tables`' lock.
  var pinned: [ID: any RegisteredReference] = [:]
  var weak: [ID: WeakReference] = [:]

  func object(for id: ID) -> (any RegisteredReference)? { pinned[id] ?? weak[id]?.object }

  func insert(_ reference: any RegisteredReference, for id: ID, pinned isPinned: Bool) {
    if isPinned {
      pinned[id] = reference
    } else {
      weak[id] = WeakReference(object: reference)
    }
  }
}

/// A registered reference that lives only as long as its holders.
struct WeakReference {
  weak var object: (any RegisteredReference)?
}
