import Foundation
import Streams

/// What `TetherRemoteConfig.EtcdConfigSource` needs of a cluster: every key under a prefix as
/// one read, and a watch on that prefix. `package`, so that the source can live with the other
/// config sources while remote config depends on TetherEtcd and not the other way round.
extension EtcdCluster {
  /// One linearizable read of every key under `prefix`, by name (the key without the prefix),
  /// and the store revision it was read at. The receipts `update` leaves beside `.etcd` keys
  /// are left out.
  package func entries(
    underPrefix prefix: String
  ) async throws(EtcdError) -> (revision: Int64, entries: [String: Data]) {
    let key = Data(prefix.utf8)
    let range = try await range(key, rangeEnd: EtcdWire.prefixEnd(key))
    var entries: [String: Data] = [:]
    for keyValue in range.keyValues {
      let name = String(decoding: keyValue.key.dropFirst(key.count), as: UTF8.self)
      if name.contains(EtcdKeyStore<Int>.receiptMarker) { continue }
      entries[name] = keyValue.value
    }
    return (range.revision, entries)
  }

  /// Watches the keys under `prefix` and calls `onChange` after each committed change, and
  /// after a resync that may have missed some. The watch reconnects like an `.etcd` key's.
  package func watchChanges(
    underPrefix prefix: String, _ onChange: @escaping @Sendable () -> Void
  ) -> AnyCancellable {
    let key = Data(prefix.utf8)
    let cluster = self
    let watcher = Cell<EtcdWatcher?>(nil)
    let start = Task {
      var revision: Int64 = 0
      var failures = 0
      while !Task.isCancelled {
        do throws(EtcdError) {
          revision = try await cluster.range(key, countOnly: true).revision
          break
        } catch {
          failures += 1
          try? await Task.sleep(
            for: EtcdKeyStore<Int>.readBackoff.delay(afterFailures: failures) ?? .zero)
        }
      }
      guard !Task.isCancelled else { return }
      let started = EtcdWatcher(
        cluster: cluster, key: key, rangeEnd: EtcdWire.prefixEnd(key),
        startRevision: revision + 1,
        handlers: .init(
          deliver: { _ in onChange() },
          resync: { () throws(EtcdError) -> Int64 in
            onChange()
            return try await cluster.range(key, countOnly: true).revision + 1
          },
          report: { _ in }))
      watcher.withLock { $0 = started }
      // A change after the read above is in the watch (it starts right after that revision).
      // One between the caller's own read and the read above is in neither: this task may run
      // after the caller fetched and someone wrote (a loaded machine showed it). So the caller
      // is told once that the prefix may have changed; a fetch at the same revision costs it a
      // `notModified`.
      onChange()
    }
    return AnyCancellable {
      start.cancel()
      watcher.withLock { $0 }?.cancel()
    }
  }
}
