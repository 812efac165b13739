import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// The in-memory clusters of one isolated storage scope (a test's).
///
/// In an isolated scope, an `.etcd` key never reaches the cluster it names: its cluster value
/// is swapped, once, when the key is created, for a stand-in (``ScopedStandIns``) that answers
/// from an ``EtcdMemoryStore``. Cluster values with the same endpoints share one store, as they
/// would share one real cluster; each gets a stand-in of its own (its own watch stream), so
/// two cluster values still behave as two machines. A test that needs the real cluster says
/// so first. The process scope has neither stores nor stand-ins.
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
}

extension EtcdCluster {
  /// The cluster a key created now talks to: this one, or in an isolated scope its in-memory
  /// stand-in (see ``EtcdMemoryStores``).
  var forCurrentScope: EtcdCluster {
    guard let standIns = ScopedStandIns<EtcdCluster>.current,
      let store = inMemoryStoreForCurrentScope
    else { return self }
    return standIns.standIn(for: self) {
      // No credentials: the store needs none, and the password stays with the real value.
      let standIn = EtcdCluster(
        endpoints: endpoints, timeout: timeout, attemptTimeout: attemptTimeout,
        watchCheckInterval: watchCheckInterval)
      standIn.http.exchange(with: store)
      return standIn
    }
  }

  /// The in-memory store standing in for this cluster in the current scope; `nil` outside
  /// isolated scopes. TetherTesting's `InMemoryEtcd` is its public face.
  package var inMemoryStoreForCurrentScope: EtcdMemoryStore? {
    EtcdMemoryStores.current?.store(for: self)
  }

  /// Makes keys created for this cluster from now on in the current isolated scope reach the
  /// real cluster (nothing changes outside isolated scopes).
  package func useRealClusterInCurrentScope() { ScopedStandIns<EtcdCluster>.current?.useReal(self) }
}
