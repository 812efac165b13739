import Foundation
import Streams
import TetherEtcd

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
/// - The watch reconnects like an `.etcd` key's (see `EtcdKey`); each change it reports
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
    let read: (revision: Int64, entries: [String: Data])
    do {
      read = try await cluster.entries(underPrefix: prefix)
    } catch {
      throw RemoteConfigError.connectionFailed("\(error)")
    }
    if let previous = request.previousVersion?.number, Int64(previous) == read.revision {
      return .notModified
    }
    let entries = read.entries.mapValues { value in
      (try? JSONValue(parsing: value)) ?? .string(String(decoding: value, as: UTF8.self))
    }
    return .modified(
      ConfigPayload(
        entries: entries,
        version: ConfigVersion(etag: String(read.revision), number: Int(read.revision))))
  }

  /// Watches the prefix and calls `onChange` after each committed change.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    cluster.watchChanges(underPrefix: prefix, onChange)
  }
}
