import Foundation
import Observation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

/// How Tether drives a custom `SharedKey`: through `TestKey`, a strategy written the way
/// users write one.
@Suite(.isolatedSharedState)
struct SharedKeyTests {
  @Test func oneSubscriptionPerLiveReferenceCancelledWithTheLastHolder() {
    let store = TestStore<Int>()
    do {
      @Shared(TestKey(store: store)) var first = 0
      @Shared(TestKey(store: store)) var second = 0
      let derived = SharedReader($first)
      #expect(store.subscribes == 1)
      #expect(store.loads == 1)
      #expect(first == second && derived.wrappedValue == first)
      #expect(store.cancels == 0)
    }
    #expect(store.cancels == 1)
    #expect(store.liveSubscriptions == 0)

    @Shared(TestKey(store: store)) var again = 0
    #expect(store.subscribes == 2)
    #expect(store.liveSubscriptions == 1)
    _ = again
  }

  @Test func releasingTheLastHolderCancelsEvenWhileASaveIsPending() {
    let pending = PendingSaves()
    let store = TestStore<Int>()
    let key = HoldingSaveKey(base: TestKey(store: store), pending: pending)
    do {
      @Shared(key) var value = 0
      $value.withLock { $0 = 1 }
      #expect(pending.continuations.count == 1)
    }
    #expect(store.cancels == 1)
    for continuation in pending.continuations { continuation.resume() }
  }

  @Test func loadsFromStorageAndIgnoresTheDefault() {
    let store = TestStore<Int>(stored: 41)
    @Shared(TestKey(store: store)) var value = 0
    #expect(value == 41)
    #expect(store.saves.isEmpty)
  }

  @Test func loadsAsynchronouslyFromAnotherThread() async {
    let store = TestStore<Int>()
    store.setLoadMode(.deferred)
    @Shared(TestKey(store: store)) var value = 1
    #expect($value.isLoading)
    #expect(value == 1)

    let changes = Lock(0)
    let shared = $value
    withObservationTrackingOf({ _ = shared.wrappedValue }) { changes.withLock { $0 += 1 } }
    await onDedicatedThread { store.resumePendingLoads(with: .success(42)) }

    #expect(value == 42)
    #expect(!$value.isLoading)
    #expect(changes.withLock { $0 } == 1)
    #expect(store.saves.isEmpty)
  }

  @Test func failingLoadSetsLoadErrorAndKeepsTheDefault() {
    let store = TestStore<Int>()
    store.setLoadMode(.failing(TestKeyError("unreadable")))
    @Shared(TestKey(store: store)) var value = 7
    #expect(value == 7)
    #expect($value.loadError as? TestKeyError == TestKeyError("unreadable"))
    #expect(!$value.isLoading)
  }

  @Test func externalUpdatesReplaceTheValueWithoutSavingAndDeletionRestoresTheDefault() {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 3
    store.externalWrite(10)
    #expect(value == 10)
    store.externalWrite(11)
    #expect(value == 11)
    store.externalDelete()
    #expect(value == 3)
    #expect(store.saves.isEmpty)
  }

  @Test func externalFailureSetsLoadErrorKeepsTheValueAndALaterValueClearsIt() {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 3
    store.externalWrite(4)
    store.externalFailure(TestKeyError("watch failed"))
    #expect(value == 4)
    #expect($value.loadError as? TestKeyError == TestKeyError("watch failed"))
    store.externalWrite(5)
    #expect(value == 5)
    #expect($value.loadError == nil)
  }

  @Test func failingSaveSetsSaveErrorKeepsTheValueAndASuccessClearsIt() {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 0
    store.setSaveFailure(TestKeyError("disk full"))
    $value.withLock { $0 = 1 }
    #expect(value == 1)
    #expect($value.saveError as? TestKeyError == TestKeyError("disk full"))
    store.setSaveFailure(nil)
    $value.withLock { $0 = 2 }
    #expect($value.saveError == nil)
    #expect(store.stored == 2)
  }

  @Test func explicitSaveIsUserInitiatedAndExplicitLoadRereads() async throws {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 0
    try await $value.save()
    #expect(store.saveContexts == [.userInitiated])
    #expect(store.saves == [0])

    store.state.withLock { $0.stored = 77 }  // written behind Tether's back, unannounced
    try await $value.load()
    #expect(value == 77)
  }

  @Test func explicitSaveAndLoadThrowTheKeysErrors() async {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 0
    store.setSaveFailure(TestKeyError("no"))
    await #expect(throws: TestKeyError("no")) { try await $value.save() }
    store.setLoadMode(.failing(TestKeyError("gone")))
    await #expect(throws: TestKeyError("gone")) { try await $value.load() }
    #expect($value.loadError as? TestKeyError == TestKeyError("gone"))
    _ = value
  }

  @Test func requireThrowsOnAFailingLoadAndOnNoValue() async throws {
    let failing = TestStore<Int>()
    failing.setLoadMode(.failing(TestKeyError("offline")))
    await #expect(throws: TestKeyError("offline")) {
      _ = try await Shared(require: TestKey(store: failing))
    }
    let empty = TestKey(store: TestStore<Int>())
    await #expect(throws: SharedLoadError.notFound(key: "\(empty)")) {
      _ = try await Shared(require: empty)
    }
    let present = TestStore<Int>(stored: 5)
    let shared = try await Shared(require: TestKey(store: present))
    #expect(shared.wrappedValue == 5)
    #expect(present.subscribes == 1)
    let reader = try await SharedReader(require: TestKey(store: present))
    #expect(reader.wrappedValue == 5)
  }

  @Test func readerKeyDeclaredFirstStillSharesWithAWriter() {
    let store = TestStore<Int>()
    @SharedReader(TestKey(store: store)) var reader = 0
    @Shared(TestKey(store: store)) var writer = 0
    $writer.withLock { $0 = 6 }
    #expect(reader == 6)
    #expect(store.saves == [6])
  }
}

/// Calls `onChange` once when something `apply` read changes.
func withObservationTrackingOf(
  _ apply: () -> Void, onChange: @escaping @Sendable () -> Void
) {
  withObservationTracking(apply, onChange: onChange)
}

/// A key that keeps its save continuations (as a throttling strategy does) for the test to
/// resume.
struct HoldingSaveKey: SharedKey {
  let base: TestKey<Int>
  let pending: PendingSaves
  var id: TestKey<Int>.ID { base.id }
  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    base.load(context: context, continuation: continuation)
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { base.subscribe(context: context, subscriber: subscriber) }
  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    pending.state.withLock { $0.append(continuation) }
  }
}

/// Save continuations a key holds on to.
final class PendingSaves: Sendable {
  let state = Lock<[SaveContinuation]>([])
  var continuations: [SaveContinuation] { state.withLock { $0 } }
}
