import Testing
import Tether
import TetherTesting

extension SharedReaderKey where Self == InMemoryKey<Int>.Default {
  /// A key with its default, the way apps declare them.
  static var visits: Self { Self[.inMemory("visits"), default: 3] }
}

@Suite(.isolatedSharedState)
struct SharedKeyDefaultTests {
  @Test func aStaticHelperCarriesTheDefault() {
    @Shared(.visits) var visits
    #expect(visits == 3)
    $visits.withLock { $0 += 1 }
    @SharedReader(.visits) var reader
    #expect(reader == 4)
  }

  @Test func aKeyWithADefaultSharesItsValueWithThePlainKey() {
    @Shared(.inMemory("visits")) var plain = 10
    @Shared(.visits) var withDefault
    #expect(withDefault == 10)
    $withDefault.withLock { $0 = 11 }
    #expect(plain == 11)
  }

  @Test func theSubscriptFormWorksInline() {
    let store = TestStore<String>()
    @Shared(TestKey(store: store)[default: "hello"]) var greeting
    #expect(greeting == "hello")
    $greeting.withLock { $0 = "hi" }
    #expect(store.saves == ["hi"])
  }
}
