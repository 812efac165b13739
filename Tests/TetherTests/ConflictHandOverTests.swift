import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherTesting

/// A refused save hands Tether the newer stored value (`SaveContinuation.resume(conflict:…)`):
/// every holder takes it and `saveError` reports the conflict, so holders never stay diverged
/// from the store.
@Suite(.isolatedSharedState)
struct ConflictHandOverTests {
  /// Issue 32, defect 4: after a refused save the holders kept their value (50) while the
  /// store held 1, until some other change happened to arrive through `subscribe`.
  @Test func aRefusedSaveHandsEveryHolderTheStoredValue() async throws {
    let store = DelayedRevisionStore(value: 5)
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    @Shared(DelayedRevisionKey(store: store)) var sameValue = 0
    try await waitUntil("the first load") { value == 5 }
    store.writeSilently(1)  // someone else's write, whose news never arrives
    $value.withLock { $0 = 50 }
    try await waitUntil("the stored value handed over") { value == 1 && sameValue == 1 }
    #expect($value.saveError as? DelayedRevisionStore.Conflict == .init(stored: 1, revision: 2))
    #expect(store.value == 1)
    // The handed-over version is the basis of the next change.
    $value.withLock { $0 += 1 }
    try await waitUntil("the next change stored") { store.value == 2 }
    try await waitUntil("saveError cleared") { $value.saveError == nil }
  }

  /// A key that refuses without handing the value over (`resume(conflict:)`): Tether loads it.
  @Test func aRefusalWithoutTheValueLoadsIt() async throws {
    let store = DelayedRevisionStore(value: 5)
    @Shared(RefusingWithoutValueKey(base: DelayedRevisionKey(store: store))) var value = 0
    try await waitUntil("the first load") { value == 5 }
    store.writeSilently(7)
    $value.withLock { $0 = 50 }
    try await waitUntil("the stored value loaded") { value == 7 }
    #expect($value.saveError is DelayedRevisionStore.Conflict)
    #expect(store.value == 7)
  }

  /// Changes made while the refused save was in flight were derived from the refused value:
  /// they are refused with it, and never written.
  @Test func changesMadeWhileARefusedSaveWasInFlightAreNotWritten() async throws {
    let store = DelayedRevisionStore(value: 5, delay: .milliseconds(20))
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    try await waitUntil("the first load") { value == 5 }
    store.writeSilently(1)
    $value.withLock { $0 = 50 }  // in flight: refused
    $value.withLock { $0 = 51 }  // waits for it
    $value.withLock { $0 = 52 }
    try await waitUntil("the stored value handed over") { value == 1 }
    #expect(store.value == 1)
    #expect(store.written == 0)
    #expect($value.saveError is DelayedRevisionStore.Conflict)
  }

  /// A `save()` waiting behind a refused save fails with the refusal.
  @Test func aSaveWaitingBehindARefusedSaveThrowsTheConflict() async throws {
    let store = DelayedRevisionStore(value: 5, delay: .milliseconds(20))
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    try await waitUntil("the first load") { value == 5 }
    store.writeSilently(1)
    $value.withLock { $0 = 50 }
    await #expect(throws: DelayedRevisionStore.Conflict.self) { try await $value.save() }
    // Nothing is dropped silently (issue #32): the holders show the conflict too.
    #expect($value.saveError is DelayedRevisionStore.Conflict)
    #expect(store.written == 0)
    #expect(value == 1)
  }
}

/// A `DelayedRevisionKey` whose refusals do not hand over the stored value.
struct RefusingWithoutValueKey: SharedKey {
  let base: DelayedRevisionKey

  var id: String { "refusing-without-value-" + base.id }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    base.load(context: context, continuation: continuation)
  }

  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    base.subscribe(context: context, subscriber: subscriber)
  }

  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    base.store.write(value, if: continuation.version) { result in
      switch result {
      case .success(let revision): continuation.resume(version: SharedVersion(revision))
      case .failure(let conflict): continuation.resume(conflict: conflict)
      }
    }
  }
}
