/// What a ``GroupingCore`` keeps for its upstreams, with each upstream's values in their own
/// type: one ``GroupSlot`` per upstream, nested in ``GroupSlotPair``s for two to four of them.
///
/// Typed slots are what keep `combineLatest` and `zip` cheap per value: a value is stored as
/// itself (no `Any` box, no cast to get it back) and a group is built without an array.
/// Sides are addressed by index, first upstream first; a pair sends an index to its head or,
/// less the head's count, to its tail.
@usableFromInline
protocol GroupSlots {
  /// One value from each side: `(A, B)` for a pair of slots, nested for more.
  associatedtype Group

  /// How many upstreams these slots hold.
  static var count: Int { get }

  init()

  /// Records the subscription of side `index`; `false` if the side already had one.
  mutating func attach(_ subscription: any Subscription, at index: Int) -> Bool

  /// Keeps `value`, of side `index`'s type, for that side: behind the values already waiting
  /// when `queueing` (zip), instead of the side's value otherwise (combineLatest).
  mutating func put<Value>(_ value: Value, at index: Int, queueing: Bool)

  /// Side `index` finished: its subscription is dropped, its values stay.
  mutating func finish(at index: Int)

  /// Every side holds a value.
  var isComplete: Bool { get }

  /// Every side finished.
  var allFinished: Bool { get }

  /// Some side finished and holds no value, so no further group can be made from it.
  var hasDrainedFinishedSide: Bool { get }

  /// One value from each side (call only when ``isComplete``): each side's oldest value,
  /// removed, when `queueing`; each side's value, kept, otherwise.
  mutating func take(queueing: Bool) -> Group

  /// Appends the subscriptions of the sides that have one and have not finished, first side
  /// first.
  func collectSubscriptions(into subscriptions: inout [any Subscription])
}

/// The slot of one upstream: its subscription, whether it finished, and its values.
@usableFromInline
struct GroupSlot<Value>: GroupSlots {
  @usableFromInline var subscription: (any Subscription)?
  @usableFromInline var isFinished = false
  /// The side's value (combineLatest), or its oldest waiting value (zip).
  @usableFromInline var head: Value?
  /// Zip only: the values waiting behind `head`, from `waitingStart` on. Taken values are
  /// skipped rather than removed one by one, so taking is O(1); the array is compacted once
  /// the skipped part outgrows the rest, and emptied (keeping its capacity) when drained.
  @usableFromInline var waiting: [Value] = []
  @usableFromInline var waitingStart = 0

  @inlinable static var count: Int { 1 }

  @inlinable init() {}

  @inlinable
  mutating func attach(_ subscription: any Subscription, at index: Int) -> Bool {
    guard self.subscription == nil, !isFinished else { return false }
    self.subscription = subscription
    return true
  }

  @inlinable
  mutating func put<Input>(_ value: Input, at index: Int, queueing: Bool) {
    // The core routes each side's values here by index; the check is a comparison of two
    // type pointers, where `as!` would be a runtime cast per value.
    precondition(Input.self == Value.self, "a value reached the slot of another side")
    let value = unsafeBitCast(value, to: Value.self)
    if queueing, head != nil {
      waiting.append(value)
    } else {
      head = value
    }
  }

  @inlinable
  mutating func finish(at index: Int) {
    subscription = nil
    isFinished = true
  }

  @inlinable var isComplete: Bool { head != nil }

  @inlinable var allFinished: Bool { isFinished }

  @inlinable var hasDrainedFinishedSide: Bool { isFinished && head == nil }

  @inlinable
  mutating func take(queueing: Bool) -> Value {
    let value = head!
    if queueing { head = nextWaiting() }
    return value
  }

  @inlinable
  mutating func nextWaiting() -> Value? {
    guard waitingStart < waiting.count else { return nil }
    let next = waiting[waitingStart]
    waitingStart += 1
    if waitingStart == waiting.count {
      waiting.removeAll(keepingCapacity: true)
      waitingStart = 0
    } else if waitingStart >= 32, waitingStart * 2 >= waiting.count {
      waiting.removeFirst(waitingStart)
      waitingStart = 0
    }
    return next
  }

  @inlinable
  func collectSubscriptions(into subscriptions: inout [any Subscription]) {
    if let subscription { subscriptions.append(subscription) }
  }
}

/// The slots of two groups of upstreams side by side: `Head`'s sides first, then `Tail`'s.
@usableFromInline
struct GroupSlotPair<Head: GroupSlots, Tail: GroupSlots>: GroupSlots {
  @usableFromInline var head = Head()
  @usableFromInline var tail = Tail()

  @inlinable static var count: Int { Head.count + Tail.count }

  @inlinable init() {}

  @inlinable
  mutating func attach(_ subscription: any Subscription, at index: Int) -> Bool {
    index < Head.count
      ? head.attach(subscription, at: index) : tail.attach(subscription, at: index - Head.count)
  }

  @inlinable
  mutating func put<Value>(_ value: Value, at index: Int, queueing: Bool) {
    if index < Head.count {
      head.put(value, at: index, queueing: queueing)
    } else {
      tail.put(value, at: index - Head.count, queueing: queueing)
    }
  }

  @inlinable
  mutating func finish(at index: Int) {
    if index < Head.count {
      head.finish(at: index)
    } else {
      tail.finish(at: index - Head.count)
    }
  }

  @inlinable var isComplete: Bool { head.isComplete && tail.isComplete }

  @inlinable var allFinished: Bool { head.allFinished && tail.allFinished }

  @inlinable var hasDrainedFinishedSide: Bool {
    head.hasDrainedFinishedSide || tail.hasDrainedFinishedSide
  }

  @inlinable
  mutating func take(queueing: Bool) -> (Head.Group, Tail.Group) {
    (head.take(queueing: queueing), tail.take(queueing: queueing))
  }

  @inlinable
  func collectSubscriptions(into subscriptions: inout [any Subscription]) {
    head.collectSubscriptions(into: &subscriptions)
    tail.collectSubscriptions(into: &subscriptions)
  }
}
