import Foundation
import TestSupport
import Testing
import Tether
import TetherTesting

/// ARCHITECTURE.md, "Where versions are decided", through `@Shared` with a
/// versioned key (`RevisionStoreKey`).
@Suite(.isolatedSharedState)
struct VersionedSaveTests {
  @Test func aSaveReceivesTheVersionItsValueWasDerivedFrom() throws {
    let store = RevisionStore()
    try store.write("41")
    @Shared(RevisionStoreKey(store: store, name: #function)) var value = 0
    #expect(value == 41)
    $value.withLock { $0 += 1 }
    #expect(store.saves.map(\.context) == [.didSet])
    #expect(store.saves.map(\.version) == [SharedVersion(1)])
    #expect(store.text == "42")
    #expect($value.saveError == nil)
  }

  /// The silent overwrite of issue 22, in one process: another writer's change arrives while
  /// the body runs (its delivery waits for the lock). The save was derived from the version
  /// before it, so it is refused, and the holder ends with the other writer's value.
  @Test func aChangeArrivingWhileTheBodyRunsMakesTheSaveAConflict() async throws {
    let store = RevisionStore()
    try store.write("1500")
    @Shared(RevisionStoreKey(store: store, name: #function)) var value = 0
    $value.withLock { value in
      // Someone else writes; its delivery to this holder now waits for the lock.
      _ = try? store.write("1000")
      value += 1
    }
    #expect(store.saves.last?.version == SharedVersion(1))
    try await waitUntil("the conflict reported") { $value.saveError != nil }
    #expect($value.saveError is RevisionStore.Conflict)
    try await waitUntil("the other writer's value") { value == 1000 }
    #expect(store.text == "1000", "the stale change overwrote the newer value")
  }

  /// Consecutive changes go on over this holder's own writes (the key resumed each save with
  /// the version it wrote), instead of conflicting with them.
  @Test func consecutiveSavesGoOnOverTheirOwnWrites() throws {
    let store = RevisionStore()
    @Shared(RevisionStoreKey(store: store, name: #function)) var value = 0
    for _ in 0..<5 { $value.withLock { $0 += 1 } }
    #expect(store.text == "5")
    #expect($value.saveError == nil)
    #expect(store.saves.map(\.version) == (0..<5).map { SharedVersion($0) })
  }

  /// A value that arrived from the store (with its version) is the base of the next save.
  @Test func aYieldedVersionIsTheBaseOfTheNextSave() async throws {
    let store = RevisionStore()
    @Shared(RevisionStoreKey(store: store, name: #function)) var value = 0
    try store.write("7")
    try await waitUntil("the write delivered") { value == 7 }
    $value.withLock { $0 += 1 }
    #expect(store.saves.last?.version == SharedVersion(1))
    #expect(store.text == "8")
    #expect($value.saveError == nil)
  }
}
