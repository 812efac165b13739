import Synchronization
import TestSupport
import Testing
import TetherSupport

/// A minimal user of `OrderedDelivery`, shaped like the package's drainers: producers hand
/// items over under a lock; one deliverer at a time calls `receive`, without the lock.
private final class Channel: Sendable {
  private struct State {
    var queue = DeliveryQueue<Int>()
    var received: [Int] = []
  }

  private let state = Lock(State())
  private let delivery = OrderedDelivery()
  /// Deliveries in progress now, and the most ever seen at once.
  private let inFlight = Atomic<Int>(0)
  private let mostInFlight = Atomic<Int>(0)
  /// What a delivered item makes the receiver send back in, re-entrantly.
  private let reply: @Sendable (Int) -> [Int]

  init(reply: @escaping @Sendable (Int) -> [Int] = { _ in [] }) { self.reply = reply }

  /// Sends `item` the way `SubjectCore.send` does: delivered at once when nobody delivers.
  func send(_ item: Int) {
    let direct = state.withLock { delivery.claim(orQueue: item, in: &$0.queue) }
    guard direct else { return }
    receive(item)
    drain()
  }

  /// Sends `item` the way a completion is sent: always through the queue.
  func enqueue(_ item: Int) {
    if state.withLock({ delivery.enqueue(item, in: &$0.queue) }) { drain() }
  }

  /// Queues `items` in one critical section, then delivers them (`RemoteConfig`'s way).
  func post(_ items: [Int]) {
    let claimed = state.withLock { state in
      for item in items { delivery.append(item, to: &state.queue) }
      return delivery.claimQueued(in: &state.queue)
    }
    if claimed { drain() }
  }

  var received: [Int] { state.withLock { $0.received } }
  var isIdle: Bool { !delivery.isDelivering && state.withLock { $0.queue.isEmpty } }
  var mostConcurrentDeliveries: Int { mostInFlight.load(ordering: .acquiring) }

  private func drain() {
    delivery.drain(
      take: { batch in state.withLock { delivery.take(from: &$0.queue, into: &batch) ? () : nil } },
      deliver: { item, _ in receive(item) })
  }

  private func receive(_ item: Int) {
    let now = inFlight.add(1, ordering: .acquiringAndReleasing).newValue
    mostInFlight.max(now, ordering: .acquiringAndReleasing)
    state.withLock { $0.received.append(item) }
    inFlight.subtract(1, ordering: .acquiringAndReleasing)
    for item in reply(item) { send(item) }
  }
}

@Suite("OrderedDelivery")
struct OrderedDeliveryTests {
  @Test("an uncontended send is delivered at once and leaves the delivery idle")
  func uncontendedSend() {
    let channel = Channel()
    channel.send(1)
    channel.send(2)
    #expect(channel.received == [1, 2])
    #expect(channel.isIdle)
  }

  @Test("an item sent from inside a delivery is delivered after it, not inside it")
  func reentrantSendIsQueuedBehind() {
    // 1 replies 10 and 11; 10 replies 100. A nested delivery would give 1, 10, 100, 11.
    let channel = Channel { item in
      switch item {
      case 1: [10, 11]
      case 10: [100]
      default: []
      }
    }
    channel.send(1)
    channel.send(2)
    #expect(channel.received == [1, 10, 11, 100, 2])
    #expect(channel.mostConcurrentDeliveries == 1)
    #expect(channel.isIdle)
  }

  @Test("queued items and directly sent ones keep the order they were handed over in")
  func enqueueAndSendKeepOrder() {
    let channel = Channel { item in item == 1 ? [2] : [] }
    channel.enqueue(1)
    channel.post([3, 4])
    channel.send(5)
    #expect(channel.received == [1, 2, 3, 4, 5])
    #expect(channel.isIdle)
  }

  @Test("items posted in one critical section are delivered in order by the one that claims")
  func postedItemsAreDelivered() {
    let channel = Channel { item in item == 1 ? [4] : [] }
    channel.post([1, 2, 3])
    channel.post([5])
    #expect(channel.received == [1, 2, 3, 4, 5])
    #expect(channel.isIdle)
  }

  @Test("concurrent senders: one delivery at a time, each sender's items in its order, none lost")
  func concurrentSenders() async {
    let senders = 4
    let perSender = 5_000
    let channel = Channel()
    // Threads of their own: spinning on Swift concurrency's (two on CI) stalls other tests.
    await concurrentlyOnDedicatedThreads(iterations: senders) { sender in
      for index in 0..<perSender {
        let item = sender * perSender + index
        if index % 3 == 0 { channel.enqueue(item) } else { channel.send(item) }
      }
    }
    let received = channel.received
    #expect(received.count == senders * perSender)
    #expect(channel.mostConcurrentDeliveries == 1)
    for sender in 0..<senders {
      let own = received.filter { $0 / perSender == sender }
      #expect(own == Array(sender * perSender..<(sender + 1) * perSender))
    }
    #expect(channel.isIdle)
  }
}
