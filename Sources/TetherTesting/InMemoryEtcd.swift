import Foundation
import Tether
import TetherEtcd

/// The in-memory etcd cluster that `.etcd` keys in an isolated scope talk to: seed it, read
/// it, write to it as another machine would, and move its lease clock.
///
/// Under `.isolatedSharedState` (or `withSharedStorage(.isolated)`), a key declared with any
/// `EtcdCluster` — even one naming production endpoints — never reaches a network. It lives
/// on a store with etcd's semantics: revisions, compare-and-swap saves that fail with
/// `EtcdError.conflict` when someone else wrote first, an exact `update`, watches that deliver
/// every change in order, and leases that expire on a clock the test moves. Cluster values
/// with the same endpoints share one store and still act as two machines (each has its own
/// watch stream), so a model's two-writer behaviour can be tested in one process:
///
/// ```swift
/// @Test(.isolatedSharedState) func maintenanceReachesEveryMachine() async throws {
///   let cluster = EtcdCluster(endpoints: [URL(string: "http://etcd.internal:2379")!])
///   let etcd = InMemoryEtcd.standingIn(for: cluster)
///   etcd.put("/app/maintenance", "true")                   // another machine's write
///   @Shared(.etcd("/app/maintenance", in: cluster)) var maintenance = false
///   try await $maintenance.load()
///   #expect(maintenance)
/// }
/// ```
///
/// The store belongs to the scope: every test starts empty. To run a test against a real
/// cluster inside an isolated scope, call ``useRealCluster(_:)`` before creating its keys.
public struct InMemoryEtcd: Sendable {
  let store: EtcdMemoryStore

  /// The store standing in for `cluster` in the current isolated scope (the same one for
  /// every cluster value with the same endpoints).
  ///
  /// - Precondition: The current scope is isolated (`.isolatedSharedState` or
  ///   `withSharedStorage(.isolated)`); outside one, keys use their real cluster.
  public static func standingIn(for cluster: EtcdCluster) -> InMemoryEtcd {
    TestingStandIns.install()
    guard let store = EtcdMemoryStores.current?.store(for: cluster) else {
      preconditionFailure(
        "InMemoryEtcd.standingIn(for:) needs an isolated scope: use it in a test marked "
          + ".isolatedSharedState, or inside withSharedStorage(.isolated)")
    }
    return InMemoryEtcd(store: store)
  }

  /// Makes `.etcd` keys created from now on for `cluster`, in the current isolated scope,
  /// talk to the real cluster (for tests of the cluster itself). Outside isolated scopes keys
  /// always do.
  public static func useRealCluster(_ cluster: EtcdCluster) {
    TestingStandIns.install()
    cluster.useRealClusterInCurrentScope()
  }

  /// The store's revision: 1 when nothing was written, one more for every write request.
  public var revision: Int64 { store.revision }

  /// Every key stored, sorted (an `update`'s receipt keys included while their holder lives).
  public var keys: [String] { store.keys }

  /// The bytes stored at `key`, or `nil` when it is absent.
  public func data(_ key: String) -> Data? { store.value(key) }

  /// The value stored at `key` as UTF-8 text (JSON for `Codable` keys), or `nil` when it is
  /// absent.
  public func stored(_ key: String) -> String? {
    data(key).map { String(decoding: $0, as: UTF8.self) }
  }

  /// Writes `text` (UTF-8; JSON for `Codable` keys) at `key`, as another machine would: holders
  /// see it through their watch, and a holder's next save made before it saw it is a
  /// conflict. Returns the write's revision.
  @discardableResult
  public func put(_ key: String, _ text: String) -> Int64 { store.put(key, Data(text.utf8)) }

  /// Writes `data` at `key`, as another machine would. Returns the write's revision.
  @discardableResult
  public func put(_ key: String, data: Data) -> Int64 { store.put(key, data) }

  /// Deletes `key`, as another machine would: holders return to their default.
  @discardableResult
  public func delete(_ key: String) -> Int64 { store.delete(key) }

  /// Moves the store's lease clock on by `duration`. Every lease not renewed within its TTL
  /// of that clock expires, and its keys are deleted — as when their writer dies or is cut
  /// off for longer than the TTL. Holders that renew do so on the real clock, so a jump longer
  /// than a TTL always expires that lease.
  public func advanceClock(by duration: Duration) { store.advance(by: duration) }

  /// Answers the next `count` write requests (puts, and transactions that would write) with
  /// 503 "request timed out" without applying them: writes whose outcome the client cannot
  /// know, which a `.etcd` key reports in `saveError` and retries in the background.
  package func failWrites(_ count: Int) { store.faults.withLock { $0.failing = count } }

  /// Answers the next write request as ``failWrites(_:)`` does, but keeps it:
  /// ``landHeldWrite()`` applies it later (its compares decide then), as a leader that commits
  /// an entry after its client gave up on it.
  package func holdNextWrite() { store.faults.withLock { $0.holdNext = true } }

  /// Applies the write request ``holdNextWrite()`` kept, if any.
  package func landHeldWrite() { store.landHeldWrite() }

  /// The number of leases alive.
  public var leaseCount: Int { store.leaseCount }
}
