import Dispatch
import Foundation
import TestSupport
import Tether

/// A real versioned store, in process, that answers every request later: reads and writes run
/// on the store's own serial queue after `delay`, as across a network. Every write gets a new
/// revision and may require the revision (or the absence) it was derived from; a deletion is a
/// revision of its own. Every change, the holders' own writes included, is announced to every
/// observer on that queue, in the order it was made, with its revision.
///
/// Other clients write with `write(_:)` and `delete()` (announced) or `writeSilently(_:)` (a
/// change whose announcement never arrives, as when a watch dropped an event).
final class DelayedRevisionStore: Sendable {
  /// A write refused because the store is no longer at the revision it required.
  struct Conflict: Error, Equatable {
    /// What is stored now (`nil`: nothing).
    var stored: Int?
    var revision: Int
  }

  /// An observer: the new value (`nil`: deleted) and its revision.
  typealias Observer = @Sendable (Int?, Int) -> Void

  private struct State {
    var value: Int?
    var revision = 0
    var observers: [UUID: Observer] = [:]
    var refused = 0
    var written = 0
    /// Reads waiting for `releaseReads()`, when `holdsReads`.
    var holdsReads = false
    var heldReads: [@Sendable () -> Void] = []
  }
  private let state: LockedState<State>
  private let queue = DispatchQueue(label: "DelayedRevisionStore")
  let delay: Duration

  init(value: Int? = nil, delay: Duration = .milliseconds(1)) {
    var initial = State()
    if let value {
      initial.value = value
      initial.revision = 1
    }
    state = LockedState(initial)
    self.delay = delay
  }

  var value: Int? { state.withLock { $0.value } }
  var revision: Int { state.withLock { $0.revision } }
  /// How many conditional writes were refused.
  var refused: Int { state.withLock { $0.refused } }
  /// How many writes were applied.
  var written: Int { state.withLock { $0.written } }

  /// Holds every read until `releaseReads()` (a first load that answers late).
  func holdReads() { state.withLock { $0.holdsReads = true } }

  /// Answers the reads held so far, and every read from now on.
  func releaseReads() {
    let reads = state.withLock { state in
      state.holdsReads = false
      defer { state.heldReads = [] }
      return state.heldReads
    }
    reads.forEach { $0() }
  }

  /// Reads the value and its revision, answering later on the store's queue.
  func read(then answer: @escaping @Sendable (Int?, Int) -> Void) {
    let read: @Sendable () -> Void = { [self] in
      later { [self] in
        let (value, revision) = state.withLock { ($0.value, $0.revision) }
        answer(value, revision)
      }
    }
    let held = state.withLock { state -> Bool in
      if state.holdsReads { state.heldReads.append(read) }
      return state.holdsReads
    }
    if !held { read() }
  }

  /// Writes `value` if the store is still at `condition` (`nil`: unconditionally; an absent
  /// version: only if nothing is stored), answering later on the store's queue.
  func write(
    _ value: Int?, if condition: SharedVersion?,
    then answer: @escaping @Sendable (Result<Int, Conflict>) -> Void
  ) {
    later { [self] in answer(apply(value, if: condition)) }
  }

  /// Another client writes `value`, ahead of every request made after this call (it is
  /// queued, without delay); the holders hear of it. Safe inside a `withLock` body.
  func write(_ value: Int) {
    queue.async { [self] in _ = apply(value, if: nil) }
  }

  /// Another client deletes the value, as `write(_:)` writes; the holders hear of it.
  func delete() {
    queue.async { [self] in _ = apply(nil, if: nil) }
  }

  /// Another client writes `value` now, and the holders never hear of it.
  func writeSilently(_ value: Int) {
    state.withLock { state in
      state.value = value
      state.revision += 1
    }
  }

  func observe(_ observer: @escaping Observer) -> @Sendable () -> Void {
    let id = UUID()
    state.withLock { $0.observers[id] = observer }
    return { [self] in _ = state.withLock { $0.observers.removeValue(forKey: id) } }
  }

  /// Runs on the queue: applies a write and announces it.
  private func apply(_ value: Int?, if condition: SharedVersion?) -> Result<Int, Conflict> {
    let outcome = state.withLock { state -> Result<(Int, [Observer]), Conflict> in
      if let condition {
        let matches =
          condition.isAbsent ? state.value == nil : condition.number == Int64(state.revision)
        guard matches else {
          state.refused += 1
          return .failure(Conflict(stored: state.value, revision: state.revision))
        }
      }
      state.value = value
      state.revision += 1
      state.written += 1
      return .success((state.revision, Array(state.observers.values)))
    }
    return outcome.map { revision, observers in
      for observer in observers { observer(value, revision) }
      return revision
    }
  }

  private func later(_ work: @escaping @Sendable () -> Void) {
    let nanoseconds = Int(delay.components.attoseconds / 1_000_000_000)
    queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: work)
  }
}

/// An `Int` in a ``DelayedRevisionStore``, written as the article teaches: loads and
/// announcements hand over the revision (a deletion as `SharedVersion.deleted(at:)`), saves
/// write only over `SaveContinuation.version` and resume late, from the store's queue, with the
/// revision they wrote; a refused save hands over the stored value (unless
/// `handsOverConflicts` is `false`, as keys written before that was possible).
///
/// `client` names a separate holder of the same stored value (another process, in effect):
/// keys with different clients have different ids, so they get references of their own.
struct DelayedRevisionKey: SharedKey {
  let store: DelayedRevisionStore
  var client = "main"
  var handsOverConflicts = true

  var id: String { client }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    store.read { value, revision in
      guard let value else {
        return continuation.resumeReturningInitialValue(version: absent(revision))
      }
      continuation.resume(returning: value, version: SharedVersion(revision))
    }
  }

  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    let stop = store.observe { value, revision in
      guard let value else {
        return subscriber.yieldReturningInitialValue(version: .deleted(at: SharedVersion(revision)))
      }
      subscriber.yield(value, version: SharedVersion(revision))
    }
    return SharedSubscription { stop() }
  }

  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    store.write(value, if: continuation.version) { [handsOverConflicts] result in
      switch result {
      case .success(let revision):
        continuation.resume(version: SharedVersion(revision))
      case .failure(let conflict) where handsOverConflicts:
        if let stored = conflict.stored {
          continuation.resume(
            conflict: conflict, storedValue: stored, version: SharedVersion(conflict.revision))
        } else {
          continuation.resume(conflict: conflict, nothingStoredAt: absent(conflict.revision))
        }
      case .failure(let conflict):
        continuation.resume(throwing: conflict)
      }
    }
  }

  /// The version of "nothing stored" at `revision`: never written, or deleted then.
  private func absent(_ revision: Int) -> SharedVersion {
    revision == 0 ? .absent : .deleted(at: SharedVersion(revision))
  }
}
