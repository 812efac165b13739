import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd
import TetherTesting

/// A `.etcd` key's own writes that no save in flight answers for — a background retry of a
/// failed save, a write whose outcome was unknown landing late — on the in-memory etcd, whose
/// write faults (`failWrites`, `holdNextWrite`) make them happen on cue. The reference's
/// version engine hears of them with their versions: the next save writes over them, never
/// refused as a conflict with this process's own write, and still never over someone else's.
@Suite(.isolatedSharedState) struct InMemoryEtcdOwnWritesTests {
  let etcd = InMemoryEtcd.standingIn(for: Self.cluster())
  static func cluster() -> EtcdCluster {
    EtcdCluster(
      endpoints: [URL(string: "http://etcd-1.invalid:2379")!], timeout: .seconds(2),
      watchCheckInterval: .seconds(1))
  }

  @Test func aSaveAfterABackgroundRetryWritesOverItButNotOverSomeoneElse() async throws {
    let key = "/tether-tests/retry-then-save/\(UUID().uuidString)"
    etcd.put(key, "1")
    @Shared(.etcd(key, in: Self.cluster())) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { value == 1 }
    // The save and its three resends, then the first background attempt and its resends.
    etcd.failWrites(8)
    $value.withLock { $0 = 2 }
    try await waitUntil("the failed save reported", timeout: .seconds(10)) {
      $value.saveError != nil
    }
    try await waitUntil("the background retry landed", timeout: .seconds(10)) {
      etcd.stored(key) == "2" && $value.saveError == nil
    }
    // Conditional on the retry's write: not refused as a conflict with it.
    try await saveWritesOver($value, 3, at: key)
    // Still conditional: someone else's write made while the body ran is not overwritten.
    $value.withLock { value in
      etcd.put(key, "7")
      value = 4
    }
    try await waitUntil("the save refused", timeout: .seconds(10)) { $value.saveError != nil }
    #expect(($value.saveError as? EtcdError) == .conflict(key: key))
    #expect(etcd.stored(key) == "7", "someone else's write was overwritten")
    try await waitUntil("the holder shows it", timeout: .seconds(10)) { value == 7 }
  }

  /// A save whose write was kept by a leader that lost its quorum fails; a newer change's save
  /// fails too; then the first write lands late. That version is this process's own: the
  /// holder never goes back to the older value, and its newer change is written over it.
  @Test func aWriteLandingLateIsOwnAndTheNewestChangeIsWrittenOverIt() async throws {
    let key = "/tether-tests/late-landing/\(UUID().uuidString)"
    etcd.put(key, "1")
    @Shared(.etcd(key, in: Self.cluster())) var value = 0
    try await waitUntil("loaded", timeout: .seconds(10)) { value == 1 }
    let seen = Recorder($value)
    etcd.holdNextWrite()
    etcd.failWrites(1_000)
    $value.withLock { $0 = 2 }
    try await waitUntil("the failed save reported", timeout: .seconds(10)) {
      $value.saveError != nil
    }
    $value.withLock { $0 = 3 }
    // Fails too: nothing of the holder's is in flight when the first write lands.
    await #expect(throws: EtcdError.self) { try await $value.save() }
    etcd.landHeldWrite()
    #expect(etcd.stored(key) == "2", "the first write landed late")
    // A load finds the late write: the holder knows it as its own, and keeps its newer value.
    try await $value.load()
    #expect(value == 3)
    etcd.failWrites(0)
    try await waitUntil("the newest change written", timeout: .seconds(20)) {
      etcd.stored(key) == "3" && $value.saveError == nil
    }
    try await saveWritesOver($value, 4, at: key)
    #expect(seen.all == [1, 2, 3, 4], "the holder's values: \(seen.all)")
  }

  /// Changes the holder to `newValue` and saves: the save succeeds and etcd stores it.
  private func saveWritesOver(
    _ holder: Shared<Int>, _ newValue: Int, at key: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    holder.withLock { $0 = newValue }
    try await holder.save()
    #expect(etcd.stored(key) == "\(newValue)", sourceLocation: sourceLocation)
    #expect(holder.saveError == nil, sourceLocation: sourceLocation)
  }
}
