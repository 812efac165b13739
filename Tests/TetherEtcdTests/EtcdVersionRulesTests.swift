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

  @Test func aValueOverTheLimitIsReportedAndTheOldValueKept() async throws {
    try await EtcdVersionRules.aValueOverTheLimitIsReportedAndTheOldValueKept(Store())
  }

  @Test func aSaveAfterAnUpdateWritesOverTheUpdate() async throws {
    try await EtcdVersionRules.aSaveAfterAnUpdateWritesOverTheUpdate(Store())
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
    /// Blocks on a plain socket, never on the concurrency pool: the body holding the value's
    /// lock waits for it, and a pool thread waiting for that lock could be the one a task
    /// doing the delete would need.
    func deleteNow(_ key: String) {
      let body = #"{"key":"\#(Data(key.utf8).base64EncodedString())"}"#
      let request =
        "POST /v3/kv/deleterange HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      defer { close(fd) }
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = server.members[0].clientPort.bigEndian
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard connected == 0 else {
        Issue.record("cannot reach etcd to delete")
        return
      }
      _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
      // The answer (read to its end) means the delete is committed.
      var buffer = [UInt8](repeating: 0, count: 4096)
      while recv(fd, &buffer, buffer.count, 0) > 0 {}
    }
    func stored(_ key: String) async -> String? { await server.stored(key) }
  }

  @Test func aDeletionNeverSeenIsNotOverwritten() async throws {
    try await EtcdVersionRules.aDeletionNeverSeenIsNotOverwritten(Store(server: SharedEtcd.start()))
  }

  @Test func aLargeValueReachesEveryHolder() async throws {
    try await EtcdVersionRules.aLargeValueReachesEveryHolder(Store(server: SharedEtcd.start()))
  }

  @Test func aValueOverTheLimitIsReportedAndTheOldValueKept() async throws {
    try await EtcdVersionRules.aValueOverTheLimitIsReportedAndTheOldValueKept(
      Store(server: SharedEtcd.start()))
  }

  @Test func aSaveAfterAnUpdateWritesOverTheUpdate() async throws {
    try await EtcdVersionRules.aSaveAfterAnUpdateWritesOverTheUpdate(
      Store(server: SharedEtcd.start()))
  }

  @Test func ownWritesAreSilent() async throws {
    try await EtcdVersionRules.ownWritesAreSilent(Store(server: SharedEtcd.start()))
  }

  @Test func aHolderNeverGoesBackwards() async throws {
    try await EtcdVersionRules.aHolderNeverGoesBackwards(Store(server: SharedEtcd.start()))
  }
}
