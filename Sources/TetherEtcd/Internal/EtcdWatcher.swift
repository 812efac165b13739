import Foundation
import Streams
import Tether
import TetherSupport

/// A watch on a key (or a range of keys) that never misses or repeats a change: a
/// registration on its cluster's shared stream (``EtcdWatchHub``).
///
/// It delivers every event from `startRevision` on, in order, exactly once, across everything
/// a real cluster does to a watch stream (see ``EtcdWatchMachine``): a dropped stream
/// re-opens on the next endpoint from each watch's next revision; a silent one is probed and
/// abandoned when its member does not answer; a compacted start revision is answered by
/// `resync`.
///
/// Delivery (`deliver`, `resync`'s result, `report`) happens one call at a time, in order.
final class EtcdWatcher: Sendable {
  struct Handlers: Sendable {
    /// Events in revision order, none at or before a revision already delivered.
    var deliver: @Sendable ([EtcdEvent]) -> Void
    /// The watch's start revision was compacted: read the current state, report it, and
    /// return the revision to watch from.
    var resync: @Sendable () async throws(EtcdError) -> Int64
    /// The watch is failing (`error`) or current again (`nil`) after failing.
    var report: @Sendable (EtcdError?) -> Void
  }

  private let hub: EtcdWatchHub
  private let id: EtcdWatchMachine.WatchID

  /// Starts watching `key` (up to `rangeEnd`, if given) from `startRevision`.
  init(
    cluster: EtcdCluster, key: Data, rangeEnd: Data?, startRevision: Int64, handlers: Handlers
  ) {
    hub = cluster.watches
    id = hub.add(
      cluster: cluster, key: key, rangeEnd: rangeEnd, from: startRevision, handlers: handlers)
  }

  /// Stops the watch: nothing is delivered after this returns to the hub's loop.
  func cancel() { hub.remove(id) }

  deinit { hub.remove(id) }
}

/// A lock-protected value that closures and tasks can share.
final class Cell<Value: Sendable>: Sendable {
  private let state: Lock<Value>

  init(_ value: Value) { state = Lock(value) }

  func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
    state.withLock { value in
      var copy = value
      defer { value = copy }
      return body(&copy)
    }
  }
}
