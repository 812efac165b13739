import Observation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherSupport
import TetherTesting

/// Plain-data values of at most 8 bytes are read from an atomic copy of their bytes, without
/// the lock, once they have been read once. These tests hold that shortcut to the same promises
/// as the locked read: exact values, no torn reads, and Observation still firing.
@Suite(.isolatedSharedState)
struct WordSizedReadTests {
  enum Mode: UInt8, Sendable, Equatable { case off, on, auto }

  /// Two halves a writer always sets together: a torn read would see them differ.
  struct Pair: Sendable, Equatable {
    var high: UInt32
    var low: UInt32
  }

  @Test func readsReturnExactlyWhatWasWritten() {
    @Shared(.inMemory("bool")) var flag = false
    @Shared(.inMemory("int8")) var small: Int8 = 0
    @Shared(.inMemory("double")) var ratio = 0.0
    @Shared(.inMemory("mode")) var mode = Mode.off
    @Shared(.inMemory("optional")) var optional: Int32? = nil
    @Shared(.inMemory("max")) var largest: UInt64 = 0
    // The first reads take the lock and switch later reads to the shortcut.
    #expect(!flag && small == 0 && ratio == 0 && mode == .off && optional == nil && largest == 0)

    $flag.withLock { $0 = true }
    $small.withLock { $0 = -128 }
    $ratio.withLock { $0 = -0.0 }
    $mode.withLock { $0 = .auto }
    $optional.withLock { $0 = -7 }
    $largest.withLock { $0 = .max }

    #expect(flag)
    #expect(small == -128)
    #expect(ratio == 0 && ratio.sign == .minus)
    #expect(mode == .auto)
    #expect(optional == -7)
    #expect(largest == .max)
    $optional.withLock { $0 = nil }
    #expect(optional == nil)
  }

  @Test func anotherHolderSeesTheWriteThroughItsOwnShortcut() {
    @Shared(.inMemory("mode")) var mine = Mode.off
    @Shared(.inMemory("mode")) var theirs = Mode.on
    #expect(mine == .off && theirs == .off)
    $theirs.withLock { $0 = .auto }
    #expect(mine == .auto)
  }

  @Test func aValueFromTheKeyIsReadThroughTheShortcut() async {
    let store = TestStore<Int>()
    let shared = Shared(wrappedValue: 0, TestKey("external", store: store))
    #expect(shared.wrappedValue == 0)
    await onDedicatedThread { store.externalWrite(41) }
    #expect(shared.wrappedValue == 41)
    await onDedicatedThread { store.externalDelete() }
    #expect(shared.wrappedValue == 0)
  }

  @Test func observationTrackingStartedAfterTheFirstReadStillFires() async {
    @Shared(.inMemory("count")) var count = 0
    #expect(count == 0)  // Later reads take the shortcut.
    let fired = Lock(0)
    withObservationTracking {
      _ = count
    } onChange: {
      fired.withLock { $0 += 1 }
    }
    let shared = $count
    await onDedicatedThread { shared.withLock { $0 = 5 } }
    #expect(fired.withLock { $0 } == 1)
    #expect(count == 5)
  }

  @Test func concurrentReadersNeverSeeATornOrOlderValue() async {
    @Shared(.inMemory("pair")) var pair = Pair(high: 0, low: 0)
    #expect(pair == Pair(high: 0, low: 0))
    let shared = $pair
    let writes: UInt32 = 100_000
    // One thread each (not a thread pool, which could run the readers and never the writer
    // they wait for). Each reader returns how many torn or older values it saw.
    let violations = await withTaskGroup(of: Int.self) { group in
      group.addTask {
        await onDedicatedThread {
          for value in 1...writes { shared.withLock { $0 = Pair(high: value, low: value) } }
          return 0
        }
      }
      for _ in 0..<3 {
        group.addTask {
          await onDedicatedThread {
            var last: UInt32 = 0
            var violations = 0
            while last < writes {
              let seen = shared.wrappedValue
              if seen.high != seen.low || seen.high < last { violations += 1 }
              last = max(last, seen.high)
            }
            return violations
          }
        }
      }
      return await group.reduce(0, +)
    }
    #expect(violations == 0)
    #expect(pair == Pair(high: writes, low: writes))
  }
}
