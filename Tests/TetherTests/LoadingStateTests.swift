import Observation
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

/// A key whose loads wait until the test resumes them: each load's continuation is kept.
private struct SlowKey: SharedKey, CustomStringConvertible {
  let id: String
  let pending: Pending

  final class Pending: Sendable {
    let continuations = Lock<[LoadContinuation<Int>]>([])
    var count: Int { continuations.withLock { $0.count } }
    /// Resumes the oldest waiting load with `value`.
    func resume(returning value: Int) {
      let continuation = continuations.withLock { $0.removeFirst() }
      continuation.resume(returning: value)
    }
    func resume(throwing error: any Error) {
      let continuation = continuations.withLock { $0.removeFirst() }
      continuation.resume(throwing: error)
    }
  }

  func load(context: LoadContext<Int>, continuation: LoadContinuation<Int>) {
    pending.continuations.withLock { $0.append(continuation) }
  }
  func subscribe(
    context: LoadContext<Int>, subscriber: SharedSubscriber<Int>
  )
    -> SharedSubscription
  { .empty }
  func save(_ value: Int, context: SaveContext, continuation: SaveContinuation) {
    continuation.resume()
  }
  var description: String { "SlowKey(\(id))" }
}

private struct Failure: Error {}

/// Whether `read` tracked by Observation is announced as changed.
private final class ChangeFlag: Sendable {
  let fired = Atomic<Bool>(false)
  var didFire: Bool { fired.load(ordering: .acquiring) }

  init(tracking read: () -> Void) {
    withObservationTracking(read) { [self] in fired.store(true, ordering: .releasing) }
  }
}

/// `isLoading` is true from the moment a load starts until the key answers, for every load.
@Suite(.isolatedSharedState)
struct LoadingStateTests {
  @Test func isLoadingWhileTheInitialLoadOfASlowKeyIsPending() async throws {
    let pending = SlowKey.Pending()
    let shared = Shared(wrappedValue: 0, SlowKey(id: "initial", pending: pending))
    #expect(shared.isLoading)
    let ended = ChangeFlag { _ = shared.isLoading }
    pending.resume(returning: 7)
    #expect(ended.didFire)
    #expect(!shared.isLoading)
    #expect(shared.wrappedValue == 7)
  }

  @Test func isLoadingWhileAnExplicitLoadIsPending() async throws {
    let pending = SlowKey.Pending()
    let shared = Shared(wrappedValue: 0, SlowKey(id: "reload", pending: pending))
    pending.resume(returning: 1)
    #expect(!shared.isLoading)
    let started = ChangeFlag { _ = shared.isLoading }
    let load = Task { try await shared.load() }
    try await waitUntil("the load to reach the key") { pending.count == 1 }
    #expect(started.didFire)
    #expect(shared.isLoading)
    pending.resume(returning: 2)
    try await load.value
    #expect(!shared.isLoading)
    #expect(shared.wrappedValue == 2)
  }

  @Test func isLoadingWhileLoadOfANewKeyIsPending() async throws {
    let pending = SlowKey.Pending()
    @Shared(.inMemory("before")) var value = 1
    #expect(!$value.isLoading)
    let started = ChangeFlag { _ = $value.isLoading }
    let holder = $value
    let load = Task { try await holder.load(SlowKey(id: "new", pending: pending)) }
    try await waitUntil("the re-key to reach the key") { pending.count == 1 }
    #expect(started.didFire)
    #expect($value.isLoading)
    let ended = ChangeFlag { _ = $value.isLoading }
    pending.resume(returning: 42)
    try await load.value
    #expect(ended.didFire)
    #expect(!$value.isLoading)
    #expect(value == 42)
  }

  @Test func aFailedLoadOfANewKeyEndsLoadingWithItsError() async throws {
    let pending = SlowKey.Pending()
    @Shared(.inMemory("stays")) var value = 1
    let holder = $value
    let load = Task { try await holder.load(SlowKey(id: "failing", pending: pending)) }
    try await waitUntil("the re-key to reach the key") { pending.count == 1 }
    #expect($value.isLoading)
    let ended = ChangeFlag { _ = $value.isLoading }
    pending.resume(throwing: Failure())
    await #expect(throws: Failure.self) { try await load.value }
    #expect(ended.didFire)
    #expect(!$value.isLoading)
    #expect($value.loadError is Failure)
    #expect(value == 1)
  }
}
