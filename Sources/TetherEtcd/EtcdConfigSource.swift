import Foundation
import Streams
import TetherRemoteConfig

/// A `RemoteConfig` source that reads every key under a prefix of an etcd cluster, and is
/// told of each committed change by a watch (no polling).
///
/// ```swift
/// let config = RemoteConfig(source: EtcdConfigSource(prefix: "/config/app/", in: cluster))
/// try await config.fetchAndActivate()
/// // `etcdctl put /config/app/welcome_title '"Hello"'` reaches `config` within milliseconds.
/// ```
///
/// - Entry names are the keys without the prefix (`/config/app/welcome_title` →
///   `welcome_title`). A value that is JSON is that JSON value; any other bytes are a string.
/// - A fetch is one linearizable range read; the store revision is the version, and a fetch
///   at the version already active answers `.notModified`.
/// - The watch reconnects like an `.etcd` key's (see ``EtcdKey``); each change it reports
///   makes `RemoteConfig` fetch and activate.
/// - The receipts `update` leaves beside `.etcd` keys are not entries.
public struct EtcdConfigSource: RemoteConfigSource {
  /// The prefix every entry's key starts with.
  public let prefix: String
  /// The cluster.
  public let cluster: EtcdCluster

  /// Creates a source for the keys under `prefix` in `cluster`.
  public init(prefix: String, in cluster: EtcdCluster) {
    self.prefix = prefix
    self.cluster = cluster
  }

  /// Reads every key under the prefix.
  ///
  /// - Throws: `RemoteConfigError.connectionFailed` with the etcd error when no
  ///   endpoint answers.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    let key = Data(prefix.utf8)
    let range: EtcdRange
    do {
      range = try await cluster.range(key, rangeEnd: EtcdWire.prefixEnd(key))
    } catch {
      throw RemoteConfigError.connectionFailed("\(error)")
    }
    if let previous = request.previousVersion?.number, Int64(previous) == range.revision {
      return .notModified
    }
    var entries: [String: JSONValue] = [:]
    for keyValue in range.keyValues {
      let name = String(decoding: keyValue.key.dropFirst(key.count), as: UTF8.self)
      if name.contains(EtcdKeyStore<Int>.receiptMarker) { continue }
      entries[name] =
        (try? JSONValue(parsing: keyValue.value))
        ?? .string(String(decoding: keyValue.value, as: UTF8.self))
    }
    return .modified(
      ConfigPayload(
        entries: entries,
        version: ConfigVersion(etag: String(range.revision), number: Int(range.revision))))
  }

  /// Watches the prefix and calls `onChange` after each committed change.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    let key = Data(prefix.utf8)
    let cluster = cluster
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
      // A change between the read above and the watch is in the watch (it starts right after
      // that revision); one before the caller's first fetch is in that fetch.
    }
    return AnyCancellable {
      start.cancel()
      watcher.withLock { $0 }?.cancel()
    }
  }
}
