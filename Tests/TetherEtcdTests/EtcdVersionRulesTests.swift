import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd
import TetherTesting

/// Issue 32's `.etcd` scenarios (`EtcdVersionRules`) on the in-memory etcd.
@Suite(.isolatedSharedState) struct InMemoryEtcdVersionRulesTests {
  struct Store: EtcdScenarioStore {
    let etcd: InMemoryEtcd
    init() { etcd = InMemoryEtcd.standingIn(for: Self.cluster()) }
    static func cluster() -> EtcdCluster {
      EtcdCluster(
        endpoints: [URL(string: "http://etcd-1.invalid:2379")!], timeout: .seconds(2),
        watchCheckInterval: .seconds(1))
    }
    func machine() -> EtcdCluster { Self.cluster() }
    func put(_ key: String, _ text: String) async { etcd.put(key, text) }
    func delete(_ key: String) async { etcd.delete(key) }
    func deleteNow(_ key: String) { etcd.delete(key) }
    func stored(_ key: String) async -> String? { etcd.stored(key) }
  }

  @Test func aDeletionNeverSeenIsNotOverwritten() async throws {
    try await EtcdVersionRules.aDeletionNeverSeenIsNotOverwritten(Store())
  }

  @Test func aLargeValueReachesEveryHolder() async throws {
    try await EtcdVersionRules.aLargeValueReachesEveryHolder(Store())
  }

  @Test func ownWritesAreSilent() async throws {
    try await EtcdVersionRules.ownWritesAreSilent(Store())
  }

  @Test func aHolderNeverGoesBackwards() async throws {
    try await EtcdVersionRules.aHolderNeverGoesBackwards(Store())
  }
}

/// Issue 32's `.etcd` scenarios (`EtcdVersionRules`) on a real etcd.
@Suite(.enabled(if: etcdInstalled, "etcd is not installed"))
struct EtcdVersionRulesTests {
  struct Store: EtcdScenarioStore {
    let server: EtcdServer
    func machine() -> EtcdCluster { client(server) }
    func put(_ key: String, _ text: String) async { await server.put(key, text) }
    func delete(_ key: String) async { await server.delete(key) }
    func deleteNow(_ key: String) {
      let done = DispatchSemaphore(value: 0)
      Task.detached { [server] in
        await server.delete(key)
        done.signal()
      }
      done.wait()
    }
    func stored(_ key: String) async -> String? { await server.stored(key) }
  }

  @Test func aDeletionNeverSeenIsNotOverwritten() async throws {
    try await EtcdVersionRules.aDeletionNeverSeenIsNotOverwritten(Store(server: SharedEtcd.start()))
  }

  @Test func aLargeValueReachesEveryHolder() async throws {
    try await EtcdVersionRules.aLargeValueReachesEveryHolder(Store(server: SharedEtcd.start()))
  }

  @Test func ownWritesAreSilent() async throws {
    try await EtcdVersionRules.ownWritesAreSilent(Store(server: SharedEtcd.start()))
  }

  @Test func aHolderNeverGoesBackwards() async throws {
    try await EtcdVersionRules.aHolderNeverGoesBackwards(Store(server: SharedEtcd.start()))
  }
}
