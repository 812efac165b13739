import Testing
import Tether
import TetherTesting

@Suite(.isolatedSharedState)
struct InMemoryKeyTests {
  @Test func twoDeclarationsSeeEachOthersWrites() {
    @Shared(.inMemory("count")) var first = 0
    @Shared(.inMemory("count")) var second = 0
    $first.withLock { $0 += 1 }
    #expect(second == 1)
    $second.withLock { $0 += 10 }
    #expect(first == 11)
  }

  @Test func laterDeclarationsDefaultIsIgnored() {
    @Shared(.inMemory("name")) var first = "first"
    @Shared(.inMemory("name")) var second = "second"
    #expect(first == "first")
    #expect(second == "first")
  }

  @Test func valueSurvivesAfterEveryHolderIsReleased() {
    do {
      @Shared(.inMemory("kept")) var value = 1
      $value.withLock { $0 = 42 }
    }
    @Shared(.inMemory("kept")) var again = 0
    #expect(again == 42)
  }

  @Test func sameNameWithAnotherValueTypeIsAnotherValue() {
    @Shared(.inMemory("typed")) var number = 1
    @Shared(.inMemory("typed")) var text = "one"
    $number.withLock { $0 = 2 }
    #expect(text == "one")
    #expect(number == 2)
  }

  @Test func isolatedScopeStartsEmpty() {
    @Shared(.inMemory("scoped")) var outer = 0
    $outer.withLock { $0 = 7 }
    withSharedStorage(.isolated) {
      @Shared(.inMemory("scoped")) var inner = 0
      #expect(inner == 0)
      $inner.withLock { $0 = 99 }
    }
    #expect(outer == 7)
  }

  @Test func keyLoadAndSaveWorkOnTheCurrentScope() async throws {
    @Shared(.inMemory("direct")) var value = 5
    let key = InMemoryKey<Int>("direct")
    let loaded = try await withCheckedThrowingContinuation { continuation in
      key.load(
        context: .userInitiated,
        continuation: LoadContinuation { continuation.resume(with: $0) })
    }
    #expect(loaded == 5)
    key.save(8, context: .userInitiated, continuation: SaveContinuation { _ in })
    #expect(value == 8)
  }

  @Test func requireFailsWithoutAStoredValueAndSucceedsWithOne() async throws {
    await #expect(throws: SharedLoadError.notFound(key: #".inMemory("missing")"#)) {
      _ = try await Shared<Int>(require: .inMemory("missing"))
    }
    @Shared(.inMemory("present")) var present = 3
    let required = try await Shared<Int>(require: .inMemory("present"))
    #expect(required.wrappedValue == 3)
  }
}
