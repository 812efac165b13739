import Synchronization
import Testing
import Tether
import TetherTesting

/// A key as written for swift-sharing: it switches over `SaveContext` exhaustively and knows
/// nothing of versions. It must compile and behave unchanged (issue 32).
struct SwiftSharingStyleKey: SharedKey {
  /// What the key was asked to save, and why, in order.
  final class Store: Sendable {
    let writes = Mutex<[String]>([])
  }

  let name: String
  let store: Store

  var id: String { name }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    continuation.resumeReturningInitialValue()
  }

  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  ) -> SharedSubscription {
    SharedSubscription {}
  }

  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    let reason: String
    switch context {
    case .didSet: reason = "didSet"
    case .userInitiated: reason = "userInitiated"
    }
    store.writes.withLock { $0.append("\(reason) \(value)") }
    continuation.resume()
  }
}

@Suite(.isolatedSharedState)
struct SaveContextTests {
  @Test func aSwiftSharingKeySwitchingOverTheContextIsToldWhyItSaves() async throws {
    let store = SwiftSharingStyleKey.Store()
    @Shared(SwiftSharingStyleKey(name: #function, store: store)) var value = 0
    $value.withLock { $0 = 1 }
    try await $value.save()
    #expect(store.writes.withLock { $0 } == ["didSet 1", "userInitiated 1"])
    #expect($value.saveError == nil)
  }

  /// The other ways swift-sharing code matches a context: `==`, `if case`, and as a hash key.
  @Test func aContextMatchesAsSwiftSharingsEnumDoes() {
    let context = SaveContext.didSet
    guard case .didSet = context else {
      Issue.record(".didSet did not match .didSet")
      return
    }
    #expect(context == .didSet)
    #expect(context != .userInitiated)
    #expect(Set([SaveContext.didSet, .userInitiated, .didSet]).count == 2)
    // Tether's earlier spellings still compile.
    #expect(context.reason == .didSet)
    #expect(SaveContext(.userInitiated) == .userInitiated)
  }

  /// A versioned key finds the version its saved value was derived from on the continuation,
  /// for a `save()` as for a `withLock`.
  @Test func aVersionedKeyGetsTheBasisVersionThroughTheContinuation() async throws {
    let store = RevisionStore()
    try store.write("41")
    @Shared(RevisionStoreKey(store: store, name: #function)) var value = 0
    try await $value.save()
    #expect(
      store.saves == [RevisionStore.Save(context: .userInitiated, version: SharedVersion(1))])
    #expect(store.text == "41")
    #expect($value.saveError == nil)
  }

  @Test func aContinuationMadeByHandCarriesTheVersionGiven() {
    let unversioned = SaveContinuation("a key", callback: { _ in })
    #expect(unversioned.version == nil)
    unversioned.resume()
    let continuation = SaveContinuation("a key", version: SharedVersion(3)) { _ in }
    #expect(continuation.version == SharedVersion(3))
    continuation.resume()
  }
}
