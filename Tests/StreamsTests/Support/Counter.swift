import Synchronization

/// A thread-safe counter for tests that count deliveries from many threads.
final class Counter: Sendable {
  private let atomic = Atomic<Int>(0)

  func increment() { atomic.add(1, ordering: .relaxed) }

  var value: Int { atomic.load(ordering: .relaxed) }
}
