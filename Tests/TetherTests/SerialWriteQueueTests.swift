import Synchronization
import TestSupport
import Testing
import TetherSupport

/// The one write queue of networked keys (`.http` and `.etcd` saves): writes run one at a time,
/// each after the one enqueued before it has finished.
@Suite struct SerialWriteQueueTests {
  private final class Overlap: Sendable {
    let running = Atomic<Int>(0)
    let seen = Atomic<Bool>(false)
  }

  @Test func writesRunOneAtATimeInTheOrderTheyWereEnqueued() async throws {
    let queue = SerialWriteQueue()
    let order = EventLog<Int>()
    let overlap = Overlap()
    for index in 0..<50 {
      queue.enqueue {
        if overlap.running.add(1, ordering: .relaxed).newValue > 1 {
          overlap.seen.store(true, ordering: .relaxed)
        }
        // Suspends mid-write: a queue that started the next write early would overlap here.
        if index.isMultiple(of: 2) { await Task.yield() }
        order.append(index)
        overlap.running.subtract(1, ordering: .relaxed)
      }
    }
    #expect(await order.wait { $0.count == 50 })
    #expect(order.events == Array(0..<50))
    let overlapped = overlap.seen.load(ordering: .relaxed)
    #expect(!overlapped, "two writes ran at once")
    try await waitUntil("nothing pending") { queue.pendingCount == 0 }
  }
}
