import Synchronization
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// `update` on a versioned key that is not atomic (a custom key that hands over conflicts):
/// exact under contention, retried with a jittered back-off within its deadline.
@Suite(.isolatedSharedState)
struct UpdateRetryTests {
  /// Issue 32, defect 3 (`update`): four holders (separate references, as four processes)
  /// each add 25 to one stored value through a key whose saves resume late. Every update
  /// returns, none throws, and the store holds exactly 100 (before: 25 results, 75 errors,
  /// and 97 stored, updates that threw having landed anyway).
  @Test func updatesUnderContentionAreExact() async throws {
    let store = DelayedRevisionStore(value: 0)
    let holders = (0..<4).map { client in
      Shared(wrappedValue: 0, DelayedRevisionKey(store: store, client: "client-\(client)"))
    }
    try await waitUntil("the first loads") { holders.allSatisfy { $0.wrappedValue == 0 } }
    let results = try await withThrowingTaskGroup(of: [Int].self) { group in
      for holder in holders {
        group.addTask {
          var results: [Int] = []
          for _ in 0..<25 {
            results.append(
              try await holder.update {
                $0 += 1; return $0
              })
          }
          return results
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(store.value == 100)
    #expect(results.sorted() == Array(1...100), "each update returns the value it stored")
  }

  /// A body that throws ends the update: nothing is stored.
  @Test func aThrowingBodyStoresNothing() async throws {
    struct Refused: Error {}
    let store = DelayedRevisionStore(value: 3)
    @Shared(DelayedRevisionKey(store: store)) var value = 0
    try await waitUntil("the first load") { value == 3 }
    await #expect(throws: Refused.self) { try await $value.update { _ in throw Refused() } }
    #expect(store.written == 0)
    #expect(value == 3)
  }

  /// The retries wait with full jitter below a ceiling that doubles, and stop at the deadline.
  @Test func theBackOffIsJitteredAndBounded() {
    let retry = UpdateRetry.standard
    #expect(retry.deadline == .seconds(30))
    #expect(retry.delay(afterFailures: 1, random: 0) == .zero)
    #expect(retry.delay(afterFailures: 1, random: 1) == .milliseconds(2))
    #expect(retry.delay(afterFailures: 3, random: 1) == .milliseconds(8))
    #expect(retry.delay(afterFailures: 30, random: 1) == .milliseconds(250))
  }

  /// Past the deadline the refusal is thrown, and nothing landed.
  @Test func aRefusalPastTheDeadlineIsThrown() async throws {
    let store = DelayedRevisionStore(value: 0)
    let key = DelayedRevisionKey(store: store)
    @Shared(key) var value = -1
    try await waitUntil("the first load") { value == 0 }
    var retry = UpdateRetry.standard
    retry.deadline = .zero
    let reference = try #require($value.root).takeUnretainedValue()
    await #expect(throws: DelayedRevisionStore.Conflict.self) {
      try await reference.updateBySaving(
        { value in
          store.writeSilently(value + 100)  // someone else always writes first
          value += 1
        }, retry: retry)
    }
    #expect(store.value == 100)
  }
}
