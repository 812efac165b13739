import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherTesting

/// What a key whose saves resume late (writing off the caller's thread, as the article
/// advises) can rely on: one save in flight, changes coalesced into the next save derived from
/// the version the previous one resumed with, a late first load never dropped, its own writes
/// never taken back as someone else's, and a value that never goes backwards.
@Suite(.isolatedSharedState)
struct SaveOrderingTests {
  /// Issue 32, defect 3: each save was made before the previous one resumed, derived from the
  /// version captured when its body ran, so the store refused 49 of 50 of the holder's own
  /// consecutive saves.
  @Test func consecutiveChangesAreNeverRefusedByTheHoldersOwnSaves() async throws {
    let store = DelayedRevisionStore(value: 0)
    @Shared(DelayedRevisionKey(store: store)) var value = -1
    try await waitUntil("the first load") { value == 0 }
    for _ in 0..<50 { $value.withLock { $0 += 1 } }
    try await waitUntil("the last change stored") { store.value == 50 }
    #expect(store.refused == 0)
    #expect($value.saveError == nil)
    #expect(value == 50)
    #expect(store.written <= 50, "one save per change at most; fewer when they coalesce")
  }

  /// Issue 32, defect 2: a change made before the first load answered was saved with no
  /// version (so unconditionally) and the late load was dropped: the store went from 10 to 1
  /// with `saveError` nil. Now that change is derived from "nothing seen" (write only if
  /// nothing is stored), so the store keeps 10 and every holder ends with it.
  @Test func aChangeBeforeTheFirstLoadAnsweredNeverOverwritesTheStoredValue() async throws {
    let store = DelayedRevisionStore(value: 10)
    store.holdReads()
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    $value.withLock { $0 = 1 }
    store.releaseReads()
    try await waitUntil("the stored value reached the holder") { value == 10 }
    try await waitUntil("the refusal reported") { $value.saveError != nil }
    #expect(store.value == 10, "the change overwrote a stored value its holder never saw")
    #expect($value.saveError is DelayedRevisionStore.Conflict)
    // The loaded version was kept: the next change goes on over it.
    $value.withLock { $0 += 1 }
    try await waitUntil("the next change stored") { store.value == 11 }
    try await waitUntil("saveError cleared") { $value.saveError == nil }
  }

  /// The same late load over an empty store: the early change is written ("nothing is stored"
  /// still holds) and kept.
  @Test func aChangeBeforeTheFirstLoadAnsweredIsWrittenWhenNothingIsStored() async throws {
    let store = DelayedRevisionStore()
    store.holdReads()
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    $value.withLock { $0 = 1 }
    store.releaseReads()
    try await waitUntil("the change stored") { store.value == 1 }
    $value.withLock { $0 += 1 }
    try await waitUntil("the next change stored") { store.value == 2 }
    #expect(value == 2)
    #expect($value.saveError == nil)
    #expect(store.refused == 0)
  }

  /// The store announces every write, the holder's own included. The holder's subscribers see
  /// each of its changes once, in order: its own writes coming back are never taken for
  /// someone else's (which would move the value back to an older one of its own).
  @Test func ownWritesAreNeverReportedAsExternalChanges() async throws {
    let store = DelayedRevisionStore(value: 0)
    @Shared(DelayedRevisionKey(store: store)) var value = -1
    try await waitUntil("the first load") { value == 0 }
    let seen = Mutex<[Int]>([])
    let cancellable = $value.publisher.sink { value in seen.withLock { $0.append(value) } }
    for _ in 0..<20 { $value.withLock { $0 += 1 } }
    try await waitUntil("the last change stored") { store.value == 20 }
    // Let every announcement (the echoes) arrive: one more write by someone else, after them.
    store.write(100)
    try await waitUntil("the other client's write") { value == 100 }
    #expect(seen.withLock { $0 } == Array(0...20) + [100])
    withExtendedLifetime(cancellable) {}
  }

  /// Two holders (separate references, as two processes) update the same stored value at
  /// once, each hearing of the other's writes and of its own. Every value one of them shows is
  /// at least the one before: every write is an increment, so a holder that took an older
  /// write after a newer one (an echo of its own, a late delivery) would show a smaller number.
  @Test func aHoldersValueNeverGoesBackwards() async throws {
    let store = DelayedRevisionStore(value: 0)
    @Shared(DelayedRevisionKey(store: store, client: "a")) var a = -1
    @Shared(DelayedRevisionKey(store: store, client: "b")) var b = -1
    try await waitUntil("the first loads") { a == 0 && b == 0 }
    let seen = Mutex<[Int]>([])
    let cancellable = $a.publisher.sink { value in seen.withLock { $0.append(value) } }
    let (holderA, holderB) = ($a, $b)
    async let updatesA: Void = { for _ in 0..<30 { _ = try await holderA.update { $0 += 1 } } }()
    async let updatesB: Void = { for _ in 0..<30 { _ = try await holderB.update { $0 += 1 } } }()
    _ = try await (updatesA, updatesB)
    #expect(store.value == 60)
    try await waitUntil("both holders converged with the store") { a == 60 && b == 60 }
    let values = seen.withLock { $0 }
    #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "went backwards: \(values)")
    withExtendedLifetime(cancellable) {}
  }

  /// Defect 1's shape on a custom key: a deletion is a version of its own. A change derived
  /// from the value before a second deletion is refused, and the holder returns to its
  /// default, instead of writing over the deletion it never saw.
  @Test func aDeletionIsAVersionOfItsOwn() async throws {
    let store = DelayedRevisionStore(value: 5)
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    try await waitUntil("the first load") { value == 5 }
    store.delete()
    try await waitUntil("the deletion") { value == 0 }
    $value.withLock { $0 = 9 }
    try await waitUntil("9 stored") { store.value == 9 }
    $value.withLock { value in
      store.delete()  // another client; the news waits for this body's lock
      value = 10
    }
    try await waitUntil("the refusal reported") { $value.saveError != nil }
    try await waitUntil("back to the default") { value == 0 }
    #expect(store.value == nil, "the change overwrote a deletion its holder never saw")
  }
}
