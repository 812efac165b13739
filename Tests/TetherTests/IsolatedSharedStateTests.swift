import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

/// Both test cases write the same in-memory key at the same time, each in its own scope.
private let bothWrote = Lock(Set<Int>())

@Suite(.isolatedSharedState)
struct IsolatedSharedStateTests {
  @Test(arguments: [1, 2])
  func parallelTestsNeverSeeEachOthersValues(marker: Int) async {
    @Shared(.inMemory("parallel")) var value = 0
    #expect(value == 0)
    $value.withLock { $0 = marker }
    bothWrote.withLock { _ = $0.insert(marker) }
    // Let the other case write too (they run in parallel); if the run is serial, go on.
    try? await waitUntil("the other case wrote", timeout: .seconds(2)) {
      bothWrote.withLock { $0.count == 2 }
    }
    for _ in 0..<100 {
      #expect(value == marker)
      await Task.yield()
    }
  }

  @Test func childTasksInheritTheScope() async {
    @Shared(.inMemory("inherited")) var value = 0
    $value.withLock { $0 = 4 }
    let seen = await Task { Shared(wrappedValue: 0, .inMemory("inherited")).wrappedValue }.value
    #expect(seen == 4)
  }

  @Test func asyncWithSharedStorageGivesAnotherScope() async {
    @Shared(.inMemory("nested")) var outer = 1
    let inner = await withSharedStorage(.isolated) {
      await Task.yield()
      return Shared(wrappedValue: 0, .inMemory("nested")).wrappedValue
    }
    #expect(inner == 0)
    #expect(outer == 1)
  }

  @Test func aScopeCanBeReused() {
    let storage = SharedStorage.isolated
    withSharedStorage(storage) {
      @Shared(.inMemory("reused")) var value = 0
      $value.withLock { $0 = 8 }
    }
    let again = withSharedStorage(storage) {
      Shared(wrappedValue: 0, .inMemory("reused")).wrappedValue
    }
    #expect(again == 8)
  }
}
