import Testing

@testable import TetherHTTP

/// The event loop's timer heap: timers fire in deadline order, a cancelled one never fires,
/// and cancelled entries do not pile up (a busy client cancels a deadline per request).
@Suite struct TimerQueueTests {
  /// The ids of what fired, in order.
  final class Fired {
    var ids: [Int] = []
  }

  @Test func dueTimersRunInDeadlineOrderAndCancelledOnesNever() {
    var queue = TimerQueue()
    let fired = Fired()
    let deadlines: [UInt64] = [50, 10, 40, 20, 30]
    var timers: [TimerID] = []
    for (index, deadline) in deadlines.enumerated() {
      timers.append(queue.schedule(at: deadline) { fired.ids.append(index) })
    }
    queue.cancel(timers[2])
    for work in queue.takeDue(now: 35) { work() }
    #expect(fired.ids == [1, 3, 4])
    for work in queue.takeDue(now: 100) { work() }
    #expect(fired.ids == [1, 3, 4, 0])
    #expect(queue.nextDeadline == nil)
  }

  @Test func cancelledEntriesAreDroppedLongBeforeTheirDeadlines() {
    var queue = TimerQueue()
    let fired = Fired()
    // A few long-lived timers (idle connections) and a stream of short-lived ones (request
    // deadlines, each cancelled when its answer comes), all due far in the future.
    for index in 0..<8 {
      _ = queue.schedule(at: 1_000_000 + UInt64(index)) { fired.ids.append(index) }
    }
    var peak = 0
    for request in 0..<20_000 {
      let timer = queue.schedule(at: 2_000_000 + UInt64(request)) { fired.ids.append(-1) }
      queue.cancel(timer)
      peak = max(peak, queue.storedCount)
    }
    #expect(peak <= 64 + 1, "the heap held \(peak) entries for 8 live timers")
    for work in queue.takeDue(now: .max) { work() }
    #expect(fired.ids == Array(0..<8))
  }

  @Test func aRebuiltHeapKeepsDeadlineOrder() {
    var queue = TimerQueue()
    let fired = Fired()
    var live: [(deadline: UInt64, index: Int)] = []
    var generator = SystemRandomNumberGenerator()
    for index in 0..<2_000 {
      let deadline = UInt64.random(in: 1...1_000_000, using: &generator)
      let timer = queue.schedule(at: deadline) { fired.ids.append(index) }
      // Most are cancelled, which rebuilds the heap many times over.
      if index % 10 == 0 {
        live.append((deadline, index))
      } else {
        queue.cancel(timer)
      }
    }
    for work in queue.takeDue(now: .max) { work() }
    let expected = live.sorted { ($0.deadline, $0.index) < ($1.deadline, $1.index) }
    #expect(fired.ids.count == expected.count)
    // Equal deadlines may fire in either order; the deadlines themselves must not decrease.
    let firedDeadlines = fired.ids.map { id in live.first { $0.index == id }!.deadline }
    #expect(firedDeadlines == expected.map(\.deadline))
  }
}
