import Foundation
import TestSupport
import Tether

/// A real versioned strategy for testing the key protocol's versions: an in-process store
/// where every write gets a new revision and a write may require the revision it expects (as a
/// database row with a revision column, or etcd's `mod_revision`). Writers other than the
/// holders use `write` directly; holders hear of every write on a task of its own, as from
/// another machine, with the tag of its writer (so a key can skip its own echoes).
final class RevisionStore: Sendable {
  struct Conflict: Error, Equatable {}

  /// What a key's `save` was called with.
  struct Save: Equatable {
    var context: SaveContext
    /// The continuation's version: what the saved value was derived from.
    var version: SharedVersion?
  }

  private struct State {
    var text: String?
    var revision = 0
    var observers: [UUID: @Sendable (String, Int, String?) -> Void] = [:]
    /// Every save a key made, in order.
    var saves: [Save] = []
  }
  private let state = LockedState(State())

  var text: String? { state.withLock { $0.text } }
  var revision: Int { state.withLock { $0.revision } }
  var saves: [Save] { state.withLock { $0.saves } }

  func read() -> (text: String?, revision: Int) { state.withLock { ($0.text, $0.revision) } }

  @discardableResult
  func write(
    _ text: String, ifRevision expected: Int? = nil, by writer: String? = nil
  ) throws(Conflict) -> Int {
    let (revision, observers) = try state.withLock { state throws(Conflict) in
      if let expected, expected != state.revision { throw Conflict() }
      state.text = text
      state.revision += 1
      return (state.revision, Array(state.observers.values))
    }
    Task { for observer in observers { observer(text, revision, writer) } }
    return revision
  }

  func record(_ save: Save) { state.withLock { $0.saves.append(save) } }

  func observe(
    _ observer: @escaping @Sendable (String, Int, String?) -> Void
  ) -> @Sendable () -> Void {
    let id = UUID()
    state.withLock { $0.observers[id] = observer }
    return { [self] in _ = state.withLock { $0.observers.removeValue(forKey: id) } }
  }
}

/// An `Int` kept in a ``RevisionStore``: loads and yields hand over the revision, saves write
/// only over `SaveContinuation.version` and resume with the revision they wrote.
struct RevisionStoreKey: SharedKey {
  let store: RevisionStore
  let name: String
  /// Tags this key's writes, so that their echoes are not taken for someone else's.
  let writer = UUID().uuidString

  var id: String { name }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    let (text, revision) = store.read()
    guard let text, let value = Int(text) else {
      return continuation.resumeReturningInitialValue(version: SharedVersion(revision))
    }
    continuation.resume(returning: value, version: SharedVersion(revision))
  }

  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    let stop = store.observe { [writer] text, revision, by in
      guard by != writer, let value = Int(text) else { return }
      subscriber.yield(value, version: SharedVersion(revision))
    }
    return SharedSubscription { stop() }
  }

  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    store.record(RevisionStore.Save(context: context, version: continuation.version))
    do {
      let revision = try store.write(
        String(value), ifRevision: continuation.version?.number.map(Int.init), by: writer)
      continuation.resume(version: SharedVersion(revision))
    } catch {
      continuation.resume(throwing: error)
    }
  }
}
