import TetherSupport

/// How a ``GroupingCore`` groups its upstreams' values.
@usableFromInline
enum Grouping: Sendable {
  /// `combineLatest`: each side keeps its latest value, and every value makes a group of the
  /// latest values once all sides have one. Without demand the group is dropped (the value
  /// stays the latest), as in Combine. Finishes when every side has finished.
  case latest
  /// `zip`: each side queues its values, and the n-th values of all sides make the n-th
  /// group, which waits for demand. Finishes once a finished side has nothing left to pair,
  /// cancelling the others.
  case inOrder
}

/// The subscription behind `combineLatest` and `zip` of two to four upstreams: it keeps each
/// upstream's values in typed ``GroupSlots`` and delivers groups of one value per upstream.
///
/// Demand from the subscriber goes to every upstream (an upstream that subscribes later is
/// asked for the demand still open), and the first failure is forwarded at once, cancelling
/// the other upstreams. Every decision is taken under `state`'s lock, and the events it makes
/// are queued in `downstream` before unlocking, so they reach the subscriber in the order
/// they were decided; subscriptions are cancelled and asked for more after unlocking.
@usableFromInline
final class GroupingCore<Downstream: Subscriber, Slots: GroupSlots>: Subscription, FanInCore {
  @usableFromInline typealias Failure = Downstream.Failure
  @usableFromInline typealias Claim = SerializedDownstream<Downstream>.Claim

  @usableFromInline
  struct State {
    @usableFromInline var slots = Slots()
    @usableFromInline var demand = Subscribers.Demand.none
    @usableFromInline var isTerminal = false

    @inlinable init() {}

    @inlinable var subscriptions: [any Subscription] {
      var subscriptions: [any Subscription] = []
      slots.collectSubscriptions(into: &subscriptions)
      return subscriptions
    }

    /// Ends the core: values and subscriptions are released.
    @inlinable mutating func terminate() -> [any Subscription] {
      isTerminal = true
      defer { slots = Slots() }
      return subscriptions
    }
  }

  /// What one locked decision asks to be done once unlocked.
  @usableFromInline
  struct Delivery {
    /// How the first group, or the queue, reaches the subscriber.
    @usableFromInline var claim = Claim.none
    /// The group `claim` hands over directly (`.direct`).
    @usableFromInline var group: Downstream.Input?
    /// Upstreams to cancel: the core completed.
    @usableFromInline var cancelling: [any Subscription] = []

    @inlinable init() {}

    /// Queues `event` behind what this delivery already holds.
    @inlinable
    mutating func enqueue(
      _ event: SerializedDownstream<Downstream>.Event,
      in downstream: SerializedDownstream<Downstream>
    ) {
      if downstream.enqueue(event), case .none = claim { claim = .deliverQueue }
    }
  }

  @usableFromInline let downstream: SerializedDownstream<Downstream>
  @usableFromInline let state = Lock(unchecked: State())
  @usableFromInline let grouping: Grouping
  /// Turns the slots' nested group into the published tuple.
  @usableFromInline let output: @Sendable (Slots.Group) -> Downstream.Input

  @inlinable
  init(
    _ downstream: Downstream, grouping: Grouping,
    output: @escaping @Sendable (Slots.Group) -> Downstream.Input
  ) {
    self.downstream = SerializedDownstream(downstream)
    self.grouping = grouping
    self.output = output
  }

  /// Sends the subscriber its subscription; call before subscribing to the upstreams.
  @inlinable
  func start() {
    addDemand(downstream.send(.subscription(self)))
  }

  // MARK: Side events

  @inlinable
  func side(_ index: Int, received subscription: any Subscription) {
    let demand = state.withLockUnchecked { state -> Subscribers.Demand? in
      guard !state.isTerminal, state.slots.attach(subscription, at: index) else { return nil }
      // Nothing was published before every side had a value, so the open demand is all the
      // subscriber asked for.
      return state.demand
    }
    subscription.requestOrCancel(demand)
  }

  @inlinable
  func side<Value>(_ index: Int, received value: Value) {
    let delivery = state.withLockUnchecked { state -> Delivery in
      guard !state.isTerminal else { return Delivery() }
      state.slots.put(value, at: index, queueing: grouping == .inOrder)
      return emitLocked(&state)
    }
    perform(delivery)
  }

  @inlinable
  func side(_ index: Int, completedWith completion: Subscribers.Completion<Failure>) {
    let delivery = state.withLockUnchecked { state -> Delivery in
      guard !state.isTerminal else { return Delivery() }
      state.slots.finish(at: index)
      var delivery = Delivery()
      if case .failure = completion {
        delivery.cancelling = state.terminate()
        delivery.enqueue(.completion(completion), in: downstream)
      } else {
        finishLocked(&state, into: &delivery)
      }
      return delivery
    }
    perform(delivery)
  }

  // MARK: Subscription

  @inlinable
  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let (delivery, upstreams) = state.withLockUnchecked { state -> (Delivery, [any Subscription]) in
      guard !state.isTerminal else { return (Delivery(), []) }
      state.demand += demand
      let upstreams = state.subscriptions
      // Zip publishes groups that waited for demand; combineLatest has none waiting (a group
      // without demand was dropped).
      guard grouping == .inOrder else { return (Delivery(), upstreams) }
      let delivery = emitLocked(&state)
      return (delivery, state.isTerminal ? [] : upstreams)
    }
    perform(delivery)
    // Every group takes a value from each upstream, so each is asked for all of it.
    for upstream in upstreams { upstream.request(demand) }
  }

  @inlinable
  func cancel() {
    let upstreams = state.withLockUnchecked { state -> [any Subscription] in
      guard !state.isTerminal else { return [] }
      return state.terminate()
    }
    downstream.cancel()
    for upstream in upstreams { upstream.cancel() }
  }

  // MARK: Delivery

  /// Queues the groups the subscriber has demand for (at most one for `.latest`, whose
  /// values stay), then the completion if no further group can come.
  @inlinable
  func emitLocked(_ state: inout State) -> Delivery {
    var delivery = Delivery()
    let queueing = grouping == .inOrder
    while state.demand > .none, state.slots.isComplete {
      state.demand -= 1
      let group = output(state.slots.take(queueing: queueing))
      if case .none = delivery.claim {
        // The first group goes straight to the subscriber when nothing else is on its way.
        delivery.claim = downstream.enqueue(value: group)
        if case .direct = delivery.claim { delivery.group = group }
      } else {
        delivery.enqueue(.value(group), in: downstream)
      }
      if !queueing { break }
    }
    finishLocked(&state, into: &delivery)
    return delivery
  }

  /// Queues `.finished` if no further group can come: for `.latest` once every side has
  /// finished, for `.inOrder` once a finished side has no value left to pair.
  @inlinable
  func finishLocked(_ state: inout State, into delivery: inout Delivery) {
    let isDone =
      grouping == .latest ? state.slots.allFinished : state.slots.hasDrainedFinishedSide
    guard !state.isTerminal, isDone else { return }
    delivery.cancelling = state.terminate()
    delivery.enqueue(.completion(.finished), in: downstream)
  }

  /// Does what a locked decision asked for; call without holding a lock.
  @inlinable
  func perform(_ delivery: Delivery) {
    for upstream in delivery.cancelling { upstream.cancel() }
    switch delivery.claim {
    case .none:
      break
    case .deliverQueue:
      addDemand(downstream.deliver())
    case .direct(let subscriber):
      addDemand(downstream.deliver(delivery.group!, to: subscriber))
    }
  }

  /// Adds demand the subscriber returned from `receive(_:)`.
  @inlinable
  func addDemand(_ demand: Subscribers.Demand) {
    if demand > .none { request(demand) }
  }
}

// MARK: Subscribing

/// The slots of two, three and four upstreams.
@usableFromInline typealias GroupSlots2<A, B> = GroupSlotPair<GroupSlot<A>, GroupSlot<B>>
@usableFromInline typealias GroupSlots3<A, B, C> = GroupSlotPair<GroupSlot<A>, GroupSlots2<B, C>>
@usableFromInline typealias GroupSlots4<A, B, C, D> = GroupSlotPair<
  GroupSlots2<A, B>, GroupSlots2<C, D>
>

/// Subscribes `subscriber` to the groups of `a` and `b`.
@inlinable
func subscribeGroups<S: Subscriber, A: Publisher, B: Publisher>(
  _ subscriber: S, of a: A, _ b: B, grouping: Grouping
) where S.Input == (A.Output, B.Output), S.Failure == A.Failure, A.Failure == B.Failure {
  let core = GroupingCore<S, GroupSlots2<A.Output, B.Output>>(subscriber, grouping: grouping) {
    $0
  }
  core.start()
  a.subscribe(core.subscriber(forSide: 0))
  b.subscribe(core.subscriber(forSide: 1))
}

/// Subscribes `subscriber` to the groups of `a`, `b` and `c`.
@inlinable
func subscribeGroups<S: Subscriber, A: Publisher, B: Publisher, C: Publisher>(
  _ subscriber: S, of a: A, _ b: B, _ c: C, grouping: Grouping
)
where
  S.Input == (A.Output, B.Output, C.Output), S.Failure == A.Failure, A.Failure == B.Failure,
  B.Failure == C.Failure
{
  let core = GroupingCore<S, GroupSlots3<A.Output, B.Output, C.Output>>(
    subscriber, grouping: grouping
  ) { ($0.0, $0.1.0, $0.1.1) }
  core.start()
  a.subscribe(core.subscriber(forSide: 0))
  b.subscribe(core.subscriber(forSide: 1))
  c.subscribe(core.subscriber(forSide: 2))
}

/// Subscribes `subscriber` to the groups of `a`, `b`, `c` and `d`.
@inlinable
func subscribeGroups<S: Subscriber, A: Publisher, B: Publisher, C: Publisher, D: Publisher>(
  _ subscriber: S, of a: A, _ b: B, _ c: C, _ d: D, grouping: Grouping
)
where
  S.Input == (A.Output, B.Output, C.Output, D.Output), S.Failure == A.Failure,
  A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure
{
  let core = GroupingCore<S, GroupSlots4<A.Output, B.Output, C.Output, D.Output>>(
    subscriber, grouping: grouping
  ) { ($0.0.0, $0.0.1, $0.1.0, $0.1.1) }
  core.start()
  a.subscribe(core.subscriber(forSide: 0))
  b.subscribe(core.subscriber(forSide: 1))
  c.subscribe(core.subscriber(forSide: 2))
  d.subscribe(core.subscriber(forSide: 3))
}
