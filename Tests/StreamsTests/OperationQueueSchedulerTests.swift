import Foundation
import Streams
import Synchronization
import TestSupport
import Testing

@Suite struct OperationQueueSchedulerTests {
  private func serialQueue() -> OperationQueue {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return queue
  }

  @Test func receiveOnKeepsThePublisherContract() async throws {
    let queue = serialQueue()
    checkOperatorContract(exactDemand: false, settle: { queue.waitUntilAllOperationsAreFinished() })
    {
      $0.receive(on: queue)
    }
  }

  @Test func receiveOnDeliversInOrderOnTheQueue() async throws {
    let queue = serialQueue()
    let subject = PassthroughSubject<Int, Never>()
    let received = Mutex<[Int]>([])
    let onQueue = Mutex<Bool>(true)
    let cancellable = subject.receive(on: queue).sink { value in
      if OperationQueue.current !== queue { onQueue.withLock { $0 = false } }
      received.withLock { $0.append(value) }
    }
    for value in 0..<100 { subject.send(value) }
    try await waitUntil("100 values") { received.withLock { $0.count } == 100 }
    #expect(received.withLock { $0 } == Array(0..<100))
    #expect(onQueue.withLock { $0 })
    withExtendedLifetime(cancellable) {}
  }

  @Test func anActionAfterADateWaitsForIt() async throws {
    let queue = serialQueue()
    let ran = Mutex<Date?>(nil)
    let start = queue.now
    queue.schedule(after: start.advanced(by: .milliseconds(50))) {
      ran.withLock { $0 = Date() }
    }
    try await waitUntil("the action") { ran.withLock { $0 } != nil }
    #expect(ran.withLock { $0 }! >= start.date.addingTimeInterval(0.05))
  }

  @Test func debounceOnAnOperationQueuePublishesTheLastValue() async throws {
    let subject = PassthroughSubject<Int, Never>()
    let received = Mutex<[Int]>([])
    let cancellable = subject.debounce(for: .milliseconds(30), scheduler: serialQueue()).sink {
      value in received.withLock { $0.append(value) }
    }
    for value in 1...3 { subject.send(value) }
    try await waitUntil("the debounced value") { !received.withLock { $0 }.isEmpty }
    #expect(received.withLock { $0 } == [3])
    withExtendedLifetime(cancellable) {}
  }

  @Test func aRepeatingActionStopsWhenCancelled() async throws {
    let queue = serialQueue()
    let ticks = Counter()
    let repeating = queue.schedule(after: queue.now, interval: .milliseconds(5)) {
      ticks.increment()
    }
    try await waitUntil("three ticks") { ticks.value >= 3 }
    repeating.cancel()
    let afterCancel = ticks.value
    // A one-off action scheduled well after several more intervals: by then a live timer
    // would have ticked again.
    let later = Mutex(false)
    queue.schedule(after: queue.now.advanced(by: .milliseconds(50))) {
      later.withLock { $0 = true }
    }
    try await waitUntil("the later action") { later.withLock { $0 } }
    #expect(ticks.value <= afterCancel + 1)  // one tick may have been in flight
  }
}
