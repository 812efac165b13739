import Streams
import Synchronization
import Testing
import Tether
import TetherSupport
import TetherTesting

/// An atomic key over a `TestStore` whose first update meets a conflict (fault injection):
/// between its read and its write another writer stores `interloper(stored)`, so the key must
/// run the transform again on the newer value, as a compare-and-swap key does.
struct ConflictOnceKey<Value: Sendable>: AtomicSharedKey {
  let base: TestKey<Value>
  let interloper: @Sendable (Value) -> Value
  let conflicts = Remaining(1)

  var id: TestKey<Value>.ID { base.id }

  func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    base.load(context: context, continuation: continuation)
  }

  func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    base.subscribe(context: context, subscriber: subscriber)
  }

  func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    base.save(value, context: context, continuation: continuation)
  }

  func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void,
    initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    do {
      while true {
        var value = base.store.stored ?? initialValue
        try transform(&value)
        if conflicts.take() {
          base.store.state.withLock { $0.stored = interloper($0.stored ?? initialValue) }
          continue
        }
        base.store.state.withLock { $0.stored = value }
        continuation.resume(returning: value)
        return
      }
    } catch {
      continuation.resume(throwing: error)
    }
  }
}

/// A count of injected faults left, taken one at a time from any thread.
final class Remaining: Sendable {
  private let count: Lock<Int>
  init(_ count: Int) { self.count = Lock(count) }
  /// Whether a fault was left (and is now used).
  func take() -> Bool {
    count.withLock { remaining in
      defer { remaining = max(0, remaining - 1) }
      return remaining > 0
    }
  }
}

/// Counts the runs of an update body from any thread.
final class RunCounter: Sendable {
  private let count = Lock(0)
  func increment() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}

@Suite(.isolatedSharedState)
struct SharedUpdateTests {
  @Test func inMemoryUpdateIsExactUnderManyConcurrentTasks() async throws {
    @Shared(.inMemory("counter")) var counter = 0
    let shared = $counter
    let results = try await withThrowingTaskGroup(of: [Int].self) { group in
      for _ in 0..<20 {
        group.addTask {
          var seen: [Int] = []
          for _ in 0..<100 {
            seen.append(
              try await shared.update {
                $0 += 1; return $0
              })
          }
          return seen
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(counter == 2_000)
    // Every update saw a distinct value: none was lost or applied twice.
    #expect(Set(results) == Set(1...2_000))
  }

  @Test func bodyRerunsOnConflictAndReturnsTheAppliedRunsResult_injectedFault() async throws {
    let store = TestStore<Int>(stored: 10)
    let key = ConflictOnceKey(base: TestKey("counter", store: store), interloper: { $0 + 100 })
    @Shared(key) var counter = 0
    #expect(counter == 10)
    let runs = RunCounter()
    let seen = try await $counter.update { value -> Int in
      runs.increment()
      value += 1
      return value
    }
    #expect(runs.value == 2)
    #expect(seen == 111)  // the run on the interloper's 110, not the discarded run on 10
    #expect(store.stored == 111)
    #expect(counter == 111)
    #expect(store.saves.isEmpty)  // the key stored it; nothing is saved again
  }

  @Test func holdersAndObserversSeeTheStoredValue() async throws {
    let store = TestStore<Int>(stored: 1)
    let key = ConflictOnceKey(base: TestKey("observed", store: store), interloper: { $0 })
    @Shared(key) var first = 0
    @Shared(key) var second = 0
    let values = Lock<[Int]>([])
    let cancellable = $second.publisher.sink { value in values.withLock { $0.append(value) } }
    try await $first.update { $0 = 42 }
    #expect(second == 42)
    #expect(values.withLock { $0 } == [1, 42])
    withExtendedLifetime(cancellable) {}
  }

  @Test func throwingBodyStoresNothing() async throws {
    let store = TestStore<Int>(stored: 5)
    let key = ConflictOnceKey(base: TestKey("throwing", store: store), interloper: { $0 })
    @Shared(key) var value = 0
    await #expect(throws: TestKeyError("no")) {
      try await $value.update { value in
        value = 99
        throw TestKeyError("no")
      }
    }
    #expect(value == 5)
    #expect(store.stored == 5)
  }

  @Test func keyThatIsNotAtomicFallsBackToWithLockAndOneSave() async throws {
    let store = TestStore<Int>(stored: 3)
    @Shared(TestKey("plain", store: store)) var value = 0
    let result = try await $value.update {
      $0 *= 2; return "doubled"
    }
    #expect(result == "doubled")
    #expect(value == 6)
    #expect(store.saves == [6])
    #expect(store.saveContexts == [.userInitiated])
  }

  @Test func fallbackSaveFailureThrowsAndSetsSaveError() async throws {
    let store = TestStore<Int>(stored: 3)
    store.setSaveFailure(TestKeyError("disk full"))
    @Shared(TestKey("failing", store: store)) var value = 0
    await #expect(throws: TestKeyError("disk full")) { try await $value.update { $0 += 1 } }
    #expect(value == 4)
    #expect($value.saveError as? TestKeyError == TestKeyError("disk full"))
  }

  @Test func memberUpdateGoesThroughTheParentsKey() async throws {
    struct Pair: Equatable, Sendable {
      var left = 0
      var right = 0
    }
    let store = TestStore<Pair>(stored: Pair(left: 1, right: 2))
    let key = ConflictOnceKey(base: TestKey("pair", store: store), interloper: { $0 })
    @Shared(key) var pair = Pair()
    let right = try await $pair.right.update {
      $0 += 10; return $0
    }
    #expect(right == 12)
    #expect(pair == Pair(left: 1, right: 12))
    #expect(store.stored == Pair(left: 1, right: 12))
  }

  @Test func defaultKeyOfAnAtomicKeyIsAtomic() async throws {
    @Shared(InMemoryKey<Int>("defaulted")[default: 7]) var value
    let result = try await $value.update {
      $0 += 1; return $0
    }
    #expect(result == 8)
    #expect(value == 8)
  }

  @Test func localValueUpdatesInPlace() async throws {
    let value = Shared(value: 1)
    let result = try await value.update {
      $0 += 1; return $0
    }
    #expect(result == 2)
    #expect(value.wrappedValue == 2)
  }

  @Test func reKeyedHolderUpdatesItsNewKey() async throws {
    let store = TestStore<Int>(stored: 10)
    let key = ConflictOnceKey(base: TestKey("target", store: store), interloper: { $0 })
    @Shared(.inMemory("start")) var value = 0
    try await $value.load(key)
    let result = try await $value.update {
      $0 += 1; return $0
    }
    #expect(result == 11)
    #expect(store.stored == 11)
    #expect(value == 11)
    @Shared(.inMemory("start")) var start = -1
    #expect(start == 0)
  }
}
