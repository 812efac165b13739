import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

@Suite(.isolatedSharedState)
struct SharedValuesTests {
  @Test func yieldsTheCurrentValueFirstThenChanges() async {
    @Shared(.inMemory("values")) var value = 1
    var iterator = $value.values.makeAsyncIterator()
    #expect(await iterator.next() == 1)
    $value.withLock { $0 = 2 }
    #expect(await iterator.next() == 2)
    $value.withLock { $0 = 2 }  // no change: nothing to yield
    $value.withLock { $0 = 3 }
    #expect(await iterator.next() == 3)
  }

  @Test func aSlowLoopAlwaysEndsAtTheLatestValue() async {
    @Shared(.inMemory("fast")) var value = 0
    let shared = $value
    let producer = Task.detached {
      for _ in 0..<20_000 { shared.withLock { $0 += 1 } }
    }
    var seen: [Int] = []
    for await current in $value.values {
      seen.append(current)
      if current == 20_000 { break }
    }
    await producer.value
    #expect(seen.last == 20_000)
    #expect(seen == seen.sorted())
  }

  @Test func cancellingTheLoopsTaskUnsubscribes() async throws {
    let store = TestStore<Int>()
    let started = Lock(false)
    let loop: Task<Void, Never>
    do {
      @Shared(TestKey(store: store)) var value = 0
      let values = $value.values
      loop = Task {
        for await _ in values { started.withLock { $0 = true } }
      }
      try await waitUntil("the loop started") { started.withLock { $0 } }
    }
    // The loop's subscription is what keeps the value alive now.
    #expect(store.cancels == 0)
    loop.cancel()
    await loop.value
    try await waitUntil("the key's subscription was cancelled") { store.cancels == 1 }
  }

  @Test func readerValuesFollowTheSharedValue() async {
    @Shared(.inMemory("reader-values")) var value = "a"
    let reader = SharedReader($value)
    var iterator = reader.values.makeAsyncIterator()
    #expect(await iterator.next() == "a")
    $value.withLock { $0 = "b" }
    #expect(await iterator.next() == "b")
  }

  @Test func derivedMemberValuesSkipChangesToOtherMembers() async {
    @Shared(.inMemory("settings-values")) var settings = Settings()
    var iterator = $settings.theme.values.makeAsyncIterator()
    #expect(await iterator.next() == .light)
    $settings.withLock { $0.fontSize = 30 }
    $settings.withLock { $0.theme = .dark }
    #expect(await iterator.next() == .dark)
  }
}
