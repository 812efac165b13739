import Foundation
import Synchronization
import Tether

/// A store with versions, as a database row with a revision column or etcd is: every write
/// gets a new revision, and a write can require the revision it expects.
final class RevisionStore: Sendable {
  /// A write that required a revision found a newer one.
  struct Conflict: Error, CustomStringConvertible {
    var description: String { "someone else wrote first; the newer value was loaded" }
  }

  private struct Row {
    var text: String
    var revision: Int
  }
  private let rows = Mutex<[String: Row]>([:])
  private let observers = Mutex<[String: [UUID: @Sendable (String, Int, String?) -> Void]]>([:])

  /// The stored text of `name` and its revision (0: nothing stored).
  func read(_ name: String) -> (text: String?, revision: Int) {
    rows.withLock { rows in (rows[name]?.text, rows[name]?.revision ?? 0) }
  }

  /// Writes `text` if `name` is still at revision `expected` (`nil`: whatever is stored) and
  /// returns the new revision. Observers hear of it on a task, as from another machine, with
  /// the `writer` tag.
  @discardableResult
  func write(
    _ name: String, _ text: String, ifRevision expected: Int? = nil, by writer: String? = nil
  ) throws -> Int {
    let revision = try rows.withLock { rows in
      let current = rows[name]?.revision ?? 0
      if let expected, expected != current { throw Conflict() }
      rows[name] = Row(text: text, revision: current + 1)
      return current + 1
    }
    let notify = observers.withLock { Array(($0[name] ?? [:]).values) }
    Task { for observer in notify { observer(text, revision, writer) } }
    return revision
  }

  /// Calls `observer` with each write's text, revision and writer tag, until the returned
  /// closure is called.
  func observe(
    _ name: String, _ observer: @escaping @Sendable (String, Int, String?) -> Void
  ) -> @Sendable () -> Void {
    let id = UUID()
    observers.withLock { $0[name, default: [:]][id] = observer }
    return { [self] in _ = observers.withLock { $0[name]?.removeValue(forKey: id) } }
  }
}

/// A versioned custom strategy: it hands the store's revision over with every value it
/// delivers, and saves only over the revision the saved value was derived from
/// (`SaveContinuation.version`), so a change made before someone else's newer value arrived is
/// refused instead of silently overwriting it.
struct RevisionKey<Value: LosslessStringConvertible & Sendable>: SharedKey {
  let name: String
  let store: RevisionStore
  /// Tags this key's writes, so their echoes are not taken for someone else's change.
  let writer = UUID().uuidString

  var id: String { name }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let (text, revision) = store.read(name)
    guard let text, let value = Value(text) else {
      return continuation.resumeReturningInitialValue(version: SharedVersion(revision))
    }
    continuation.resume(returning: value, version: SharedVersion(revision))
  }

  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let stop = store.observe(name) { [writer] text, revision, by in
      guard by != writer, let value = Value(text) else { return }
      subscriber.yield(value, version: SharedVersion(revision))
    }
    return SharedSubscription { stop() }
  }

  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    switch context {
    case .didSet: break  // after a `withLock`: a slower store could coalesce these
    case .userInitiated: break  // `save()`: written at once, as every save is here
    }
    do {
      // The revision the value was derived from, captured when the `withLock` body ran.
      let revision = try store.write(
        name, value.description, ifRevision: continuation.version?.number.map(Int.init), by: writer)
      // Which revision this save wrote: the next save derived from the same value goes on
      // over it instead of conflicting with our own write.
      continuation.resume(version: SharedVersion(revision))
    } catch {
      // A conflict sets `saveError`; the newer value reaches the holders through `subscribe`.
      continuation.resume(throwing: error)
    }
  }
}
