import Synchronization

/// Ordered delivery without holding a lock while calling out: the package's one *drainer*.
///
/// Several threads produce items (changes, events, completions) under a lock of their own, and
/// the items must reach their receivers in that order, one call at a time, with no lock held
/// during the call (a receiver may produce again, re-entrantly, or take the same lock). The
/// thread that produces while nobody delivers becomes the *deliverer*: it delivers its own item,
/// then everything others queued meanwhile, until the queue is empty. Every other producer (a
/// thread, or a receiver producing from inside a delivery) only queues, so its item is delivered
/// behind the one being delivered.
///
/// The parts: this flag, stored next to the caller's lock, and a ``DeliveryQueue`` inside the
/// state that lock protects. Every method but ``finishIfIdle()`` is called with that lock held;
/// ``drain(take:deliver:)`` is called without it, by the deliverer only.
///
/// The flag is atomic so that a deliverer that found nothing queued ends with one
/// compare-and-exchange instead of a second lock round trip: the uncontended path (produce,
/// deliver, end) takes the caller's lock once and allocates nothing. Only a thread holding the
/// lock moves the flag away from idle or sets `queued`; the deliverer alone moves it back to
/// idle, outside the lock only from `delivering` (nothing queued). So while nobody delivers the
/// queue is empty, and an item handed over directly (``claim(orQueue:in:)``) is never delivered
/// before one queued earlier.
@usableFromInline
package struct OrderedDelivery: ~Copyable, Sendable {
  @usableFromInline let flags = Atomic<UInt8>(0)
  @inlinable static var delivering: UInt8 { 1 }
  @inlinable static var queued: UInt8 { 2 }

  /// Creates the flag of an idle delivery.
  @inlinable package init() {}

  /// Whether a deliverer runs now (a hint outside the lock; exact under it).
  @inlinable package var isDelivering: Bool {
    flags.load(ordering: .acquiring) & Self.delivering != 0
  }

  /// Becomes the deliverer of `item` if nobody delivers: then the caller delivers `item` itself,
  /// after unlocking, and calls ``drain(take:deliver:)``. Otherwise `item` is queued behind the
  /// delivery in progress. Called with the lock held.
  ///
  /// - Returns: Whether the caller delivers `item` (it was not queued).
  @inlinable
  package func claim<Item>(
    orQueue item: @autoclosure () -> Item, in queue: inout DeliveryQueue<Item>
  ) -> Bool {
    if become(queueing: false) { return true }
    queue.items.append(item())
    return false
  }

  /// Queues `item`; if nobody delivers, the caller becomes the deliverer and must call
  /// ``drain(take:deliver:)`` after unlocking. Called with the lock held.
  ///
  /// - Returns: Whether the caller became the deliverer.
  @inlinable
  package func enqueue<Item>(_ item: Item, in queue: inout DeliveryQueue<Item>) -> Bool {
    queue.items.append(item)
    return become(queueing: true)
  }

  /// Queues `item` without claiming delivery: a later ``claimQueued(in:)`` (or the deliverer in
  /// progress) delivers it. For callers that queue several items in one critical section and
  /// decide who delivers afterwards. Called with the lock held.
  @inlinable
  package func append<Item>(_ item: Item, to queue: inout DeliveryQueue<Item>) {
    queue.items.append(item)
    if flags.load(ordering: .acquiring) != 0 { _ = become(queueing: true) }
  }

  /// Becomes the deliverer if nobody delivers and items wait (queued with ``append(_:to:)``).
  /// Called with the lock held.
  ///
  /// - Returns: Whether the caller became the deliverer and must call ``drain(take:deliver:)``.
  @inlinable
  package func claimQueued<Item>(in queue: inout DeliveryQueue<Item>) -> Bool {
    guard !queue.items.isEmpty, flags.load(ordering: .acquiring) == 0 else { return false }
    return become(queueing: true)
  }

  /// Marks the delivery as running with work queued (`queueing`) or not. Returns whether it
  /// was idle: the caller is the deliverer. Only the deliverer changes the flag concurrently
  /// (`delivering` to idle), so this retries at most once.
  @inlinable
  func become(queueing: Bool) -> Bool {
    var current = flags.load(ordering: .acquiring)
    while true {
      let idle = current == 0
      let desired =
        idle
        ? (queueing ? Self.delivering | Self.queued : Self.delivering)
        : Self.delivering | Self.queued
      if current == desired { return false }
      let (exchanged, original) = flags.compareExchange(
        expected: current, desired: desired, ordering: .acquiringAndReleasing)
      if exchanged { return idle }
      current = original
    }
  }

  /// Ends the delivery if nothing was queued since the deliverer last took the queue; called
  /// without the lock, by the deliverer.
  ///
  /// - Returns: Whether the delivery ended (else call ``take(from:into:)`` under the lock).
  @inlinable
  package func finishIfIdle() -> Bool {
    flags.compareExchange(
      expected: Self.delivering, desired: 0, ordering: .acquiringAndReleasing
    ).exchanged
  }

  /// Moves every queued item into `batch` (empty) in order, or ends the delivery if none is
  /// queued. O(1): the two buffers are swapped, and the larger is kept in the queue when the
  /// delivery ends, so steady traffic allocates nothing. Called with the lock held, by the
  /// deliverer.
  ///
  /// - Returns: Whether items were taken (`false`: the delivery ended).
  @inlinable
  package func take<Item>(from queue: inout DeliveryQueue<Item>, into batch: inout [Item]) -> Bool {
    guard !queue.items.isEmpty else {
      // Under the lock nobody else moves the flag, so a plain store ends the delivery.
      flags.store(0, ordering: .releasing)
      if batch.capacity > queue.items.capacity { swap(&queue.items, &batch) }
      return false
    }
    swap(&queue.items, &batch)
    flags.store(Self.delivering, ordering: .releasing)
    return true
  }

  /// The deliverer's loop, after it delivered the item it claimed (or right after
  /// ``enqueue(_:in:)``): delivers batches of queued items in order until none is left.
  ///
  /// `take` runs ``take(from:into:)`` under the caller's lock and answers what the batch is
  /// delivered with (a snapshot of the receivers), or `nil` when the delivery ended. `deliver`
  /// is called for each item, without the lock, and may change that context (a receiver that
  /// joined or left). Both are inlined into the caller.
  @inlinable
  package func drain<Item, Context>(
    take: (inout [Item]) -> Context?, deliver: (Item, inout Context) -> Void
  ) {
    var batch: [Item] = []
    while !finishIfIdle() {
      guard var context = take(&batch) else { return }
      for item in batch { deliver(item, &context) }
      batch.removeAll(keepingCapacity: true)
    }
  }
}

/// The items an ``OrderedDelivery`` has not delivered yet, in the state its caller's lock
/// protects. Only the delivery's methods add and take items.
@usableFromInline
package struct DeliveryQueue<Item> {
  @usableFromInline var items: [Item] = []

  /// An empty queue.
  @inlinable package init() {}

  /// Whether nothing waits.
  @inlinable package var isEmpty: Bool { items.isEmpty }

  /// Drops what waits (a closed stream delivers nothing more); the deliverer in progress, if
  /// any, ends when it next finds the queue empty.
  @inlinable package mutating func removeAll() { items = [] }
}

extension DeliveryQueue: Sendable where Item: Sendable {}
