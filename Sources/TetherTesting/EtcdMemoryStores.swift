import Tether
import TetherEtcd
import TetherSupport

/// The in-memory clusters of one isolated storage scope (a test's).
///
/// In an isolated scope, an `.etcd` key never reaches the cluster it names: its cluster value
/// is swapped, once, when the key is created, for a stand-in (see ``TestingStandIns``) that
/// answers from an ``EtcdMemoryStore``. Cluster values with the same endpoints share one store,
/// as they would share one real cluster; each gets a stand-in of its own (its own watch
/// stream), so two cluster values still behave as two machines. A test that needs the real
/// cluster says so first. The process scope has neither stores nor stand-ins.
final class EtcdMemoryStores: Sendable {
  private let stores = Lock<[[String]: EtcdMemoryStore]>([:])

  /// The current scope's stores; `nil` outside isolated scopes.
  static var current: EtcdMemoryStores? {
    let storage = SharedStorage.current
    guard storage.isIsolated else { return nil }
    return storage.scopedValue { EtcdMemoryStores() }
  }

  /// The store standing in for the cluster at `cluster`'s endpoints.
  func store(for cluster: EtcdCluster) -> EtcdMemoryStore {
    stores.withLock { stores in
      let endpoints = cluster.endpoints.map(\.absoluteString).sorted()
      if let store = stores[endpoints] { return store }
      let store = EtcdMemoryStore()
      stores[endpoints] = store
      return store
    }
  }

  /// The stand-in for `cluster` in the current isolated scope: a cluster value answered by the
  /// scope's store for its endpoints.
  static func standIn(for cluster: EtcdCluster) -> EtcdCluster {
    guard let stores = current else { return cluster }
    return cluster.standIn(answeredBy: stores.store(for: cluster))
  }
}
