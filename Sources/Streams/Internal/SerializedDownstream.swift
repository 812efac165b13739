import TetherSupport

/// The downstream end of an operator whose events come from more than one thread: several
/// upstreams (`merge`, `zip`, `flatMap`…) or scheduler actions (`debounce`, `receive(on:)`…).
///
/// Every call into the subscriber goes through ``send(_:)``: the first caller that finds no
/// delivery in progress becomes the deliverer and drains the queue, outside the lock, in the
/// order events were sent; a caller that finds a delivery in progress (another thread, or the
/// subscriber re-entering the operator) only enqueues. So calls into the subscriber are never
/// concurrent, never made under a lock, and a re-entrant event is queued behind the one being
/// delivered.
///
/// The subscription is the first event, a completion the last: after it, or after ``cancel()``,
/// the subscriber is released and nothing more is delivered.
@usableFromInline
final class SerializedDownstream<Downstream: Subscriber>: Sendable {
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline
  enum Event {
    case subscription(any Subscription)
    case value(Input)
    case completion(Subscribers.Completion<Failure>)
  }

  @usableFromInline
  struct State {
    @usableFromInline var downstream: Downstream?
    @usableFromInline var queue = DeliveryQueue<Event>()
    /// A completion was sent, or the subscriber cancelled: later events are dropped.
    @usableFromInline var isClosed = false

    @inlinable init(downstream: Downstream) { self.downstream = downstream }
  }

  @usableFromInline let state: Lock<State>
  /// Who delivers (see `OrderedDelivery`).
  @usableFromInline let delivery = OrderedDelivery()

  @inlinable
  init(_ downstream: Downstream) {
    state = Lock(unchecked: State(downstream: downstream))
  }

  /// Whether a completion was sent or the subscriber cancelled.
  @inlinable var isClosed: Bool { state.withLockUnchecked { $0.isClosed } }

  /// Delivers `event` now, or queues it behind the delivery in progress.
  ///
  /// - Returns: The demand that the subscriber added while this call was delivering (from
  ///   `receive(_:)`), which the operator must account for; `.none` if another caller
  ///   delivers the event.
  @inlinable @discardableResult
  func send(_ event: Event) -> Subscribers.Demand {
    enqueue(event) ? deliver() : .none
  }

  /// Queues `event` without delivering it.
  ///
  /// An operator calls this while holding its own lock, so that the order of events matches
  /// the order of its decisions (this lock is only ever taken inside the operator's, never the
  /// other way round), then calls ``deliver()`` after unlocking if this returned `true`.
  ///
  /// - Returns: Whether the caller has become the deliverer and must call ``deliver()``.
  @inlinable
  func enqueue(_ event: Event) -> Bool {
    state.withLockUnchecked { state -> Bool in
      guard !state.isClosed else { return false }
      if case .completion = event { state.isClosed = true }
      return delivery.enqueue(event, in: &state.queue)
    }
  }

  /// What ``enqueue(value:)`` decided.
  @usableFromInline
  enum Claim {
    /// Another caller delivers the value, or the stream is closed.
    case none
    /// The value was queued and the caller has become the deliverer: call ``deliver()``.
    case deliverQueue
    /// Nothing was queued or being delivered: the caller delivers the value itself, straight
    /// to this subscriber, with ``deliver(_:to:)``.
    case direct(Downstream)
  }

  /// Like ``enqueue(_:)`` for a value, with a fast path: when nothing is queued or being
  /// delivered, the value is not queued at all, and the caller hands it to the subscriber
  /// directly (no event is built, copied, queued or destroyed, and one lock round trip less).
  @inlinable
  func enqueue(value: Input) -> Claim {
    state.withLockUnchecked { state -> Claim in
      guard !state.isClosed, let downstream = state.downstream else { return .none }
      // While nobody delivers nothing is queued, so the value goes first.
      guard delivery.claim(orQueue: .value(value), in: &state.queue) else { return .none }
      return .direct(downstream)
    }
  }

  /// Delivers a value claimed with ``enqueue(value:)`` (`.direct`), then whatever was queued
  /// meanwhile; call without holding a lock.
  ///
  /// - Returns: The demand the subscriber added while receiving values.
  @inlinable
  func deliver(_ value: Input, to downstream: Downstream) -> Subscribers.Demand {
    let added = downstream.receive(value)
    // Nearly always nothing was queued meanwhile: hand delivery back without the lock.
    return delivery.finishIfIdle() ? added : added + deliver()
  }

  /// Delivers what ``enqueue(value:)`` decided; call without holding a lock.
  @inlinable
  func complete(_ claim: Claim, value: Input) -> Subscribers.Demand {
    switch claim {
    case .none: return .none
    case .deliverQueue: return deliver()
    case .direct(let downstream): return deliver(value, to: downstream)
    }
  }

  /// Drops queued events and releases the subscriber; nothing is delivered after this returns,
  /// except a call another thread is already making.
  @inlinable
  func cancel() {
    let released = state.withLockUnchecked { state -> Downstream? in
      state.isClosed = true
      state.queue.removeAll()
      defer { state.downstream = nil }
      return state.downstream
    }
    // The subscriber may hold the last reference to objects whose deinit calls back in.
    withExtendedLifetime(released) {}
  }

  /// Delivers queued events until the queue is empty; call only after ``enqueue(_:)`` returned
  /// `true`, and never while holding a lock.
  ///
  /// - Returns: The demand the subscriber added while receiving values.
  @inlinable
  func deliver() -> Subscribers.Demand {
    var added = Subscribers.Demand.none
    delivery.drain(
      take: { batch in
        state.withLockUnchecked { delivery.take(from: &$0.queue, into: &batch) ? () : nil }
      },
      deliver: { event, _ in
        // Checked for each event: nothing is delivered once `cancel()` returned.
        let downstream = state.withLockUnchecked { state -> Downstream? in
          guard let downstream = state.downstream else { return nil }
          if case .completion = event { state.downstream = nil }
          return downstream
        }
        guard let downstream else { return }
        switch event {
        case .subscription(let subscription):
          downstream.receive(subscription: subscription)
        case .value(let value):
          added += downstream.receive(value)
        case .completion(let completion):
          downstream.receive(completion: completion)
        }
      })
    return added
  }
}
