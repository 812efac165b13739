import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

struct Settings: Codable, Equatable, Sendable {
  enum Theme: String, Codable, Sendable { case light, dark }
  var theme = Theme.light
  var fontSize = 12
}

/// A value that is not `Equatable`: every `withLock` counts as a change.
struct Opaque: Sendable {
  var number = 0
}

@Suite(.isolatedSharedState)
struct SharedTests {
  @Test func withLockReturnsTheBodysResult() {
    @Shared(.inMemory("result")) var value = 1
    let doubled = $value.withLock { value -> Int in
      value += 1
      return value * 2
    }
    #expect(doubled == 4)
    #expect(value == 2)
  }

  @Test func withLockRethrowsAndDiscardsTheMutationMadeBeforeTheThrow() {
    @Shared(.inMemory("throwing")) var value = 1
    #expect(throws: TestKeyError("boom")) {
      try $value.withLock { value in
        value = 5
        throw TestKeyError("boom")
      }
    }
    #expect(value == 1)
  }

  @Test func changedValueIsSavedWithDidSetAndNoOpIsNot() async {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var value = 0
    $value.withLock { $0 = 1 }
    $value.withLock { $0 = 1 }
    #expect(store.saves == [1])
    #expect(store.saveContexts == [.didSet])
  }

  @Test func nonEquatableValueIsAlwaysSaved() {
    let store = TestStore<Opaque>()
    @Shared(TestKey(store: store)) var value = Opaque()
    $value.withLock { _ in }
    $value.withLock { _ in }
    #expect(store.saves.count == 2)
  }

  @Test func valueInitializerIsALocalSharedValue() {
    let shared = Shared(value: 10)
    let other = Shared(projectedValue: shared)
    shared.withLock { $0 += 1 }
    #expect(other.wrappedValue == 11)
    let unrelated = Shared(value: 10)
    #expect(unrelated.wrappedValue == 10)
  }

  @Test func optionalKeyStartsAtNil() {
    @Shared(.inMemory("optional")) var value: Int?
    #expect(value == nil)
    $value.withLock { $0 = 3 }
    #expect(value == 3)
  }

  @Test func derivedMemberReadsAndWritesThroughTheParent() {
    let store = TestStore<Settings>()
    @Shared(TestKey(store: store)) var settings = Settings()
    let theme = $settings.theme
    #expect(theme.wrappedValue == .light)
    theme.withLock { $0 = .dark }
    #expect(settings.theme == .dark)
    #expect(store.saves == [Settings(theme: .dark, fontSize: 12)])
    $settings.withLock { $0.theme = .light }
    #expect(theme.wrappedValue == .light)
  }

  @Test func unwrappingAnOptionalReturnsNilForNil() {
    @Shared(.inMemory("maybe")) var maybe: Int?
    #expect(Shared($maybe) == nil)
    $maybe.withLock { $0 = 1 }
    let unwrapped = try! #require(Shared($maybe))
    #expect(unwrapped.wrappedValue == 1)
    unwrapped.withLock { $0 += 1 }
    #expect(maybe == 2)
    $maybe.withLock { $0 = nil }
    #expect(unwrapped.wrappedValue == 2)
  }

  @Test func readerOfASharedSeesEveryWrite() {
    @Shared(.inMemory("read")) var value = 0
    let reader = SharedReader($value)
    for expected in 1...5 {
      $value.withLock { $0 += 1 }
      #expect(reader.wrappedValue == expected)
    }
  }

  @Test func concurrentIncrementsAreAtomicAndSavesArriveInOrder() async {
    let store = TestStore<Int>()
    @Shared(TestKey(store: store)) var count = 0
    let shared = $count
    // Sixteen threads of their own: 160,000 locked saves would otherwise hold both threads of
    // a 2-core machine's cooperative pool for seconds, stalling every test running beside it.
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<16 {
        group.addTask {
          await onDedicatedThread {
            for _ in 0..<10_000 { shared.withLock { $0 += 1 } }
          }
        }
      }
    }
    #expect(count == 160_000)
    let saves = store.saves
    #expect(saves.count == 160_000)
    #expect(saves.last == 160_000)
    #expect(saves == Array(1...160_000))
  }

  @Test func keyWhoseSaveReadsAndWritesTheSameSharedDoesNotDeadlock() async {
    let box = Lock<Shared<Int>?>(nil)
    let seen = Lock<[Int]>([])
    let store = TestStore<Int>(onSave: { saved in
      guard let shared = box.withLock({ $0 }) else { return }
      seen.withLock { $0.append(shared.wrappedValue) }
      if saved == 1 { shared.withLock { $0 = 2 } }
    })
    @Shared(TestKey(store: store)) var value = 0
    box.withLock { $0 = $value }
    $value.withLock { $0 = 1 }
    #expect(value == 2)
    #expect(store.saves == [1, 2])
    #expect(seen.withLock { $0 }.first == 1)
    box.withLock { $0 = nil }
  }

  @Test func creatingTheSameKeyFromManyTasksMakesOneReference() async {
    let store = TestStore<Int>()
    let holders = await withTaskGroup(of: Shared<Int>.self) { group in
      for _ in 0..<100 {
        group.addTask { Shared(wrappedValue: 0, TestKey(store: store)) }
      }
      return await group.reduce(into: [Shared<Int>]()) { $0.append($1) }
    }
    #expect(store.subscribes == 1)
    #expect(store.loads == 1)
    holders[0].withLock { $0 = 9 }
    #expect(holders.allSatisfy { $0.wrappedValue == 9 })
  }
}
