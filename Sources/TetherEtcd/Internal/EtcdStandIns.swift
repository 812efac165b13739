import Foundation
import Streams
import Tether
import TetherHTTP

/// The in-memory clusters of one isolated storage scope, and the cluster values that stand in
/// for the real ones there.
///
/// In an isolated scope (a test's), an `.etcd` key never reaches the cluster it names: its
/// cluster value is swapped, once, when the key is created, for a stand-in that answers from
/// an ``EtcdMemoryStore``. Cluster values with the same endpoints share one store, as they
/// would share one real cluster; each gets a stand-in of its own (its own watch stream), so
/// two cluster values still behave as two machines. A test that needs the real cluster says
/// so first (``useReal(_:)``). The process scope has no stand-ins: there, keys use the
/// clusters they name.
final class EtcdStandIns: Sendable {
  private struct State {
    var stores: [[String]: EtcdMemoryStore] = [:]
    /// Each real cluster value (kept alive, so its identifier is never reused) and its
    /// stand-in.
    var standIns: [ObjectIdentifier: (real: EtcdCluster, standIn: EtcdCluster)] = [:]
    var real: [ObjectIdentifier: EtcdCluster] = [:]
  }
  private let state = Lock(State())

  /// The current scope's stand-ins; `nil` outside isolated scopes.
  static var current: EtcdStandIns? {
    let storage = SharedStorage.current
    guard storage.isIsolated else { return nil }
    return storage.scopedValue { EtcdStandIns() }
  }

  /// The store standing in for the cluster at `cluster`'s endpoints.
  func store(for cluster: EtcdCluster) -> EtcdMemoryStore {
    state.withLock { state in
      let endpoints = cluster.endpoints.map(\.absoluteString).sorted()
      if let store = state.stores[endpoints] { return store }
      let store = EtcdMemoryStore()
      state.stores[endpoints] = store
      return store
    }
  }

  /// What keys created for `cluster` in this scope talk to.
  func cluster(for cluster: EtcdCluster) -> EtcdCluster {
    let id = ObjectIdentifier(cluster)
    if let found = state.withLock({ $0.real[id] ?? $0.standIns[id]?.standIn }) { return found }
    let store = store(for: cluster)
    // No credentials: the store needs none, and the password stays with the real value.
    let standIn = EtcdCluster(
      endpoints: cluster.endpoints, timeout: cluster.timeout,
      attemptTimeout: cluster.attemptTimeout, watchCheckInterval: cluster.watchCheckInterval)
    standIn.http.exchange(with: store)
    return state.withLock { state in
      if let raced = state.real[id] ?? state.standIns[id]?.standIn { return raced }
      state.standIns[id] = (cluster, standIn)
      return standIn
    }
  }

  /// Lets keys created for `cluster` from now on in this scope reach the real cluster.
  func useReal(_ cluster: EtcdCluster) {
    state.withLock { $0.real[ObjectIdentifier(cluster)] = cluster }
  }
}

extension EtcdCluster {
  /// The cluster a key created now talks to: this one, or in an isolated scope its in-memory
  /// stand-in (see ``EtcdStandIns``).
  var forCurrentScope: EtcdCluster { EtcdStandIns.current?.cluster(for: self) ?? self }

  /// The in-memory store standing in for this cluster in the current scope; `nil` outside
  /// isolated scopes. TetherTesting's `InMemoryEtcd` is its public face.
  package var inMemoryStoreForCurrentScope: EtcdMemoryStore? {
    EtcdStandIns.current?.store(for: self)
  }

  /// Makes keys created for this cluster from now on in the current isolated scope reach the
  /// real cluster (nothing changes outside isolated scopes).
  package func useRealClusterInCurrentScope() { EtcdStandIns.current?.useReal(self) }
}
