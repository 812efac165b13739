import Dispatch
import Foundation
import Synchronization
import Tether

/// A store with versions, as a database row with a revision column or etcd is: every write
/// gets a new revision, a deletion too, and a write can require the version it was derived
/// from. Like a store across a network, it answers later: on its own serial queue, which also
/// tells observers of every change, in order.
final class RevisionStore: Sendable {
  /// A write found the store no longer at the version it required.
  struct Conflict: Error, CustomStringConvertible {
    /// What is stored now (`nil`: nothing), at `version`.
    var text: String?
    var version: SharedVersion
    var description: String { "someone else wrote first (now \(text ?? "nothing"))" }
  }

  private struct Row {
    var text: String?  // nil: deleted
    var revision: Int
    var version: SharedVersion {
      text == nil ? .deleted(at: SharedVersion(revision)) : SharedVersion(revision)
    }
  }
  private let rows = Mutex<[String: Row]>([:])
  private let observers = Mutex<[UUID: @Sendable (String, String?, SharedVersion) -> Void]>([:])
  private let queue = DispatchQueue(label: "RevisionStore")

  /// Answers with the text of `name` and its version, later, on the store's queue.
  func read(_ name: String, then answer: @escaping @Sendable (String?, SharedVersion) -> Void) {
    queue.async { [self] in
      let row = rows.withLock { $0[name] }
      answer(row?.text, row?.version ?? .absent)
    }
  }

  /// Writes `text` (`nil`: deletes) if `name` is still at `expected`: any version when `nil`,
  /// nothing stored when it is absent. Answers later with the new version or the conflict.
  func write(
    _ name: String, _ text: String?, over expected: SharedVersion? = nil,
    then answer: @escaping @Sendable (Result<SharedVersion, Conflict>) -> Void = { _ in }
  ) {
    queue.async { [self] in
      let result = rows.withLock { rows -> Result<Row, Conflict> in
        let current = rows[name]
        let version = current?.version ?? .absent
        if let expected, expected.isAbsent ? current?.text != nil : expected != version {
          return .failure(Conflict(text: current?.text, version: version))
        }
        let row = Row(text: text, revision: (current?.revision ?? 0) + 1)
        rows[name] = row
        return .success(row)
      }
      if case .success(let row) = result {
        for observer in observers.withLock({ Array($0.values) }) {
          observer(name, row.text, row.version)
        }
      }
      answer(result.map(\.version))
    }
  }

  /// Calls `observer` with every change, on the store's queue, until the returned closure is
  /// called.
  func observe(
    _ observer: @escaping @Sendable (String, String?, SharedVersion) -> Void
  ) -> @Sendable () -> Void {
    let id = UUID()
    observers.withLock { $0[id] = observer }
    return { [self] in _ = observers.withLock { $0.removeValue(forKey: id) } }
  }
}

/// A value kept in a ``RevisionStore``: every value it delivers carries its version, every
/// save writes only over the version it was derived from and resumes with the version it
/// wrote, and a refused save hands over what is stored instead.
struct RevisionKey<Value: LosslessStringConvertible & Sendable>: SharedKey {
  let name: String
  let store: RevisionStore

  var id: String { name }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    store.read(name) { text, version in
      guard let text, let value = Value(text) else {
        return continuation.resumeReturningInitialValue(version: version)
      }
      continuation.resume(returning: value, version: version)
    }
  }

  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    // Every change, this process's own writes included: Tether knows its own by their
    // versions (they resumed its saves), so they never come back as someone else's.
    let stop = store.observe { [name] changed, text, version in
      guard changed == name else { return }
      guard let text else { return subscriber.yieldReturningInitialValue(version: version) }
      if let value = Value(text) { subscriber.yield(value, version: version) }
    }
    return SharedSubscription { stop() }
  }

  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet: break  // after a `withLock`: a slower store could coalesce these
    case .userInitiated: break  // `save()`: written at once, as every save is here
    }
    // Written over the version the value was derived from: `.absent` (nothing seen yet)
    // writes only if nothing is stored. Resumed later, from the store's queue.
    store.write(name, value.description, over: continuation.version) { result in
      switch result {
      case .success(let version):
        continuation.resume(version: version)
      case .failure(let conflict):
        // Hand over what is stored: every holder takes it, and saveError is the conflict.
        if let text = conflict.text, let stored = Value(text) {
          continuation.resume(conflict: conflict, storedValue: stored, version: conflict.version)
        } else if conflict.text == nil {
          continuation.resume(conflict: conflict, nothingStoredAt: conflict.version)
        } else {
          continuation.resume(conflict: conflict)  // unreadable: Tether loads it
        }
      }
    }
  }
}

func sell(from store: RevisionStore) async throws {
  @Shared(RevisionKey(name: "stock", store: store)) var stock = 10
  $stock.withLock { $0 -= 1 }  // written over the version it was derived from
  try await $stock.update { $0 -= 1 }  // exact, even while others write
}
