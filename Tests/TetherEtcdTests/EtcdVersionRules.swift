import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

/// Where the version-rule scenarios run: the in-memory etcd or a real cluster. Each scenario
/// below runs on both (`InMemoryEtcdVersionRulesTests`, `EtcdVersionRulesTests`).
protocol EtcdScenarioStore: Sendable {
  /// A new client of the store ("another machine" when called twice).
  func machine() -> EtcdCluster
  /// Writes `text` at `key` as another client would.
  func put(_ key: String, _ text: String) async
  /// Deletes `key` as another client would.
  func delete(_ key: String) async
  /// Deletes `key` as another client would, before returning (inside a `withLock` body).
  func deleteNow(_ key: String)
  /// The stored text at `key`, or `nil`.
  func stored(_ key: String) async -> String?
}

/// The scenarios of issue 32 for `.etcd` keys.
enum EtcdVersionRules {
  /// Issue 32, defect 1: PUT 5, the holder loads it, another client deletes, the holder sets
  /// 9, then inside a second `withLock` another client deletes again and the body sets 10.
  /// The second deletion was never seen, so 10 must not be written over it.
  static func aDeletionNeverSeenIsNotOverwritten(_ store: some EtcdScenarioStore) async throws {
    let key = "/tether-tests/deletions/\(UUID().uuidString)"
    await store.put(key, "5")
    @Shared(.etcd(key, in: store.machine())) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { value == 5 }
    await store.delete(key)
    try await waitUntil("the first deletion seen", timeout: .seconds(10)) { value == 0 }
    $value.withLock { $0 = 9 }
    try await waitUntil("9 stored", timeout: .seconds(10)) { await store.stored(key) == "9" }
    $value.withLock { value in
      store.deleteNow(key)
      value = 10
    }
    try await waitUntil("the save refused", timeout: .seconds(10)) { $value.saveError != nil }
    #expect(($value.saveError as? EtcdError) == .conflict(key: key))
    #expect(await store.stored(key) == nil, "a deletion nobody here saw was overwritten")
    try await waitUntil("the holder shows the deletion", timeout: .seconds(10)) { value == 0 }
    // And the holder goes on from the deletion it now knows of.
    $value.withLock { $0 = 11 }
    try await waitUntil("11 stored", timeout: .seconds(10)) {
      await store.stored(key) == "11" && $value.saveError == nil
    }
  }

  /// Issue 32, defect 6: a 1.4 MB value (etcd accepts up to 1.5 MiB by default) written by
  /// another client reaches a watching holder and a new holder's load.
  static func aLargeValueReachesEveryHolder(_ store: some EtcdScenarioStore) async throws {
    let key = "/tether-tests/large/\(UUID().uuidString)"
    let size = 1_400_000
    @Shared(.etcd(key, in: store.machine())) var watching = "small"
    try await waitUntil("loaded", timeout: .seconds(10)) { !$watching.isLoading }
    await store.put(key, "\"" + String(repeating: "x", count: size) + "\"")
    try await waitUntil("the watching holder has it", timeout: .seconds(30)) {
      watching.count == size
    }
    #expect($watching.loadError == nil)
    @Shared(.etcd(key, in: store.machine())) var loading = ""
    try await waitUntil("a new holder loads it", timeout: .seconds(30)) { loading.count == size }
    #expect($loading.loadError == nil)
    // And a holder's own large save reaches the other.
    $loading.withLock { $0 = String(repeating: "y", count: size) }
    try await waitUntil("the other holder has the large save", timeout: .seconds(30)) {
      watching.first == "y"
    }
    #expect($loading.saveError == nil)
  }

  /// Issue 32, item 6: a stored value over the key's `maximumValueSize` sets `loadError` to
  /// `EtcdValueTooLarge` and the holders keep their value; a save over it is not sent;
  /// the watch goes on, and the next value within the limit arrives and clears the error.
  static func aValueOverTheLimitIsReportedAndTheOldValueKept(
    _ store: some EtcdScenarioStore
  ) async throws {
    let key = "/tether-tests/too-large/\(UUID().uuidString)"
    let limit = 1_000
    let tooLarge = EtcdValueTooLarge(key: key, size: 2_002, limit: limit)
    await store.put(key, "\"small\"")
    @Shared(.etcd(key, in: store.machine(), maximumValueSize: limit)) var watching = ""
    try await waitUntil("loaded", timeout: .seconds(10)) { watching == "small" }
    let big = "\"" + String(repeating: "x", count: 2_000) + "\""
    await store.put(key, big)
    try await waitUntil("the watching holder reports it", timeout: .seconds(10)) {
      ($watching.loadError as? EtcdValueTooLarge) == tooLarge
    }
    #expect(watching == "small")
    // A new holder's load reports it too, and keeps its default.
    @Shared(.etcd(key, in: store.machine(), maximumValueSize: limit)) var loading = "default"
    try await waitUntil("the loading holder reports it", timeout: .seconds(10)) {
      ($loading.loadError as? EtcdValueTooLarge) == tooLarge
    }
    #expect(loading == "default")
    // A save over the limit is refused before it is sent.
    $loading.withLock { $0 = String(repeating: "y", count: 2_000) }
    try await waitUntil("the save refused", timeout: .seconds(10)) {
      ($loading.saveError as? EtcdValueTooLarge) == tooLarge
    }
    #expect(await store.stored(key) == big)
    // The watch goes on: the next value within the limit reaches the holder.
    await store.put(key, "\"next\"")
    try await waitUntil("the next value arrives", timeout: .seconds(10)) {
      watching == "next" && $watching.loadError == nil
    }
  }

  /// Issue 32, item 1: a save after an `update` of the same holder writes over the update's
  /// own write. The update resumes with the version it wrote, so the reference's version
  /// engine makes the save conditional on it; the store keeps no version chain of its own.
  static func aSaveAfterAnUpdateWritesOverTheUpdate(_ store: some EtcdScenarioStore) async throws {
    let key = "/tether-tests/update-then-save/\(UUID().uuidString)"
    await store.put(key, "1")
    @Shared(.etcd(key, in: store.machine())) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { value == 1 }
    let updated = try await $value.update { value in
      value += 1
      return value
    }
    #expect(updated == 2)
    $value.withLock { $0 = 10 }
    try await $value.save()
    #expect(await store.stored(key) == "10")
    #expect($value.saveError == nil)
    #expect(value == 10)
  }

  /// Issue 32, item 8: a holder's own writes never come back to it as someone else's
  /// change, and its value never goes backwards.
  static func ownWritesAreSilent(_ store: some EtcdScenarioStore) async throws {
    let key = "/tether-tests/echo/\(UUID().uuidString)"
    let cluster = store.machine()
    @Shared(.etcd(key, in: cluster)) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { !$value.isLoading }
    let seen = Recorder($value)
    for n in 1...10 {
      $value.withLock { $0 = n }
      try await $value.save()
    }
    try await waitUntil("10 stored", timeout: .seconds(10)) { await store.stored(key) == "10" }
    // A later external change is the proof that every echo before it was handled.
    await store.put(key, "100")
    try await waitUntil("the external change", timeout: .seconds(10)) { value == 100 }
    #expect(seen.all == Array(0...10) + [100], "the holder's values: \(seen.all)")
  }

  /// Issue 32, item 8: external changes in quick succession reach a holder in order, never
  /// an older one after a newer one, while the holder also loads and saves.
  static func aHolderNeverGoesBackwards(_ store: some EtcdScenarioStore) async throws {
    let key = "/tether-tests/order/\(UUID().uuidString)"
    @Shared(.etcd(key, in: store.machine())) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { !$value.isLoading }
    let seen = Recorder($value)
    for n in 1...40 {
      await store.put(key, "\(n)")
      if n % 10 == 0 { try await $value.load() }
    }
    try await waitUntil("the last change", timeout: .seconds(10)) { value == 40 }
    let values = seen.all
    #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "values: \(values)")
  }
}
