import Observation
import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// Re-keying: `load(_:)` points a holder at another key.
@Suite(.isolatedSharedState)
struct SharedLoadKeyTests {
  @Test func rePointsALetHolderAndEveryCopyOfIt() async throws {
    @Shared(.inMemory("user-2")) var other = "grace"
    let user = Shared(wrappedValue: "ada", .inMemory("user-1"))
    let copy = user
    try await user.load(.inMemory("user-2"))
    #expect(user.wrappedValue == "grace")
    #expect(copy.wrappedValue == "grace")
    user.withLock { $0 = "grace hopper" }
    #expect(other == "grace hopper")  // writes reach the new key's holders
    @Shared(.inMemory("user-1")) var first = ""
    #expect(first == "ada")  // and the old key is untouched
  }

  @Test func rePointsThroughAProjectedValue() async throws {
    @Shared(.inMemory("b")) var b = 2
    @Shared(.inMemory("a")) var a = 1
    try await $a.load(.inMemory("b"))
    #expect(a == 2)
    $b.withLock { $0 = 3 }
    #expect(a == 3)  // reads follow the new key's changes
  }

  @Test func newKeyWithNothingStoredStartsFromTheHoldersValue() async throws {
    @Shared(.inMemory("start")) var value = 5
    try await $value.load(.inMemory("empty"))
    #expect(value == 5)
    @Shared(.inMemory("empty")) var joined = 0
    #expect(joined == 5)
  }

  @Test func defaultKeyStartsFromItsDefault() async throws {
    @Shared(.inMemory("start")) var value = 5
    try await $value.load(InMemoryKey<Int>("fresh")[default: 42])
    #expect(value == 42)
    let reader = SharedReader(wrappedValue: 0, InMemoryKey<Int>("other"))
    try await reader.load(InMemoryKey<Int>("fresh-reader")[default: 7])
    #expect(reader.wrappedValue == 7)
  }

  @Test func loadsTheNewKeysStoredValue() async throws {
    let store = TestStore<Int>(stored: 77)
    @Shared(.inMemory("start")) var value = 1
    try await $value.load(TestKey("stored", store: store))
    #expect(value == 77)
    $value.withLock { $0 += 1 }
    #expect(store.saves == [78])
  }

  @Test func failedLoadThrowsSetsLoadErrorAndKeepsTheOldKey() async throws {
    let store = TestStore<Int>(stored: 1)
    store.setLoadMode(.failing(TestKeyError("offline")))
    @Shared(.inMemory("kept")) var value = 9
    await #expect(throws: TestKeyError("offline")) {
      try await $value.load(TestKey("remote", store: store))
    }
    #expect(value == 9)
    #expect($value.loadError as? TestKeyError == TestKeyError("offline"))
    $value.withLock { $0 = 10 }
    @Shared(.inMemory("kept")) var same = 0
    #expect(same == 10)  // still on the old key
    #expect(store.saves.isEmpty)
    try await $value.load(.inMemory("next"))
    #expect($value.loadError == nil)  // a successful re-key clears it
  }

  @Test func derivedMembersFollowTheHolder() async throws {
    struct Point: Equatable, Sendable {
      var x = 0
      var y = 0
    }
    @Shared(.inMemory("q")) var q = Point(x: 5, y: 6)
    @Shared(.inMemory("p")) var p = Point(x: 1, y: 2)
    let x = $p.x
    try await $p.load(.inMemory("q"))
    #expect(x.wrappedValue == 5)
    x.withLock { $0 = 50 }
    #expect(q == Point(x: 50, y: 6))
  }

  @Test func readerRePointsWithoutMovingTheSharedItReads() async throws {
    @Shared(.inMemory("source")) var source = 1
    @Shared(.inMemory("elsewhere")) var elsewhere = 2
    let reader = SharedReader($source)
    try await reader.load(.inMemory("elsewhere"))
    #expect(reader.wrappedValue == 2)
    #expect(source == 1)
    $elsewhere.withLock { $0 = 3 }
    #expect(reader.wrappedValue == 3)
  }

  @Test func observationTrackersSeeTheSwitch() async throws {
    @Shared(.inMemory("seen")) var seen = 1
    @Shared(.inMemory("next")) var next = 2
    let fired = Lock(false)
    withObservationTracking {
      _ = seen
    } onChange: {
      fired.withLock { $0 = true }
    }
    try await $seen.load(.inMemory("next"))
    #expect(fired.withLock { $0 })
    #expect(seen == next)
  }
}
