import Synchronization
import TetherSupport

/// The delivery engine shared by ``PassthroughSubject`` and ``CurrentValueSubject``.
///
/// Every event (a value, a completion, a new subscriber, a replay of a held value) goes
/// through one FIFO queue per subject and is delivered by exactly one thread at a time: the
/// thread that finds the subject idle becomes the deliverer and drains the queue; any other
/// sender (another thread, or a subscriber sending re-entrantly from inside `receive`)
/// appends to the queue and returns. So every subscriber sees the subject's events in the
/// same order, calls into one subscriber are never concurrent, and no lock is held while a
/// subscriber runs. The fast path (nobody delivering, queue empty) takes the subject's lock
/// twice per value plus each conduit's once, and allocates nothing.
///
/// The hot path is `@inlinable` so that it is specialised for the concrete element and
/// subscriber types in the caller's module; unspecialised generic code would spend most of
/// its time looking up generic metadata.
@usableFromInline
final class SubjectCore<Output, Failure: Error>: Sendable {
  // Sendable: the stored properties are `state`, a `Lock` (a Mutex), and `delivery`, atomic.
  @usableFromInline
  enum Event {
    case value(Output)
    case completion(Subscribers.Completion<Failure>)
    case attach(SubjectConduit<Output, Failure>)
    case replay(SubjectConduit<Output, Failure>)
  }

  @usableFromInline
  struct State {
    @usableFromInline var conduits: ContiguousArray<SubjectConduit<Output, Failure>> = []
    @usableFromInline var queue = DeliveryQueue<Event>()
    /// Set when `send(completion:)` is called: later sends are ignored at once.
    @usableFromInline var completion: Subscribers.Completion<Failure>?
    /// Set when the completion event has been delivered: later subscribers complete at once.
    @usableFromInline var deliveredCompletion: Subscribers.Completion<Failure>?
    /// The current value of a `CurrentValueSubject`; `nil` for a `PassthroughSubject`.
    @usableFromInline var current: Output?
    /// Whether this is a `CurrentValueSubject` core.
    @usableFromInline var keepsLatest: Bool
    /// Upstream subscriptions handed over with `send(subscription:)`.
    @usableFromInline var upstreams: [any Subscription] = []

    @inlinable init(current: Output?) {
      self.current = current
      keepsLatest = current != nil
    }
  }

  @usableFromInline let state: Lock<State>

  /// Who delivers (see `OrderedDelivery`): the deliverer of an uncontended send ends with one
  /// compare-and-exchange, without taking the lock a second time.
  @usableFromInline let delivery = OrderedDelivery()

  @inlinable init(current: Output?) {
    state = Lock(unchecked: State(current: current))
  }

  @inlinable var current: Output? { state.withLockUnchecked { $0.current } }

  @inlinable var conduitCount: Int { state.withLockUnchecked { $0.conduits.count } }

  @inlinable func send(_ value: Output) {
    let snapshot: ContiguousArray<SubjectConduit<Output, Failure>>? = state.withLockUnchecked {
      state in
      guard state.completion == nil else { return nil }
      if state.keepsLatest { state.current = value }
      guard delivery.claim(orQueue: .value(value), in: &state.queue) else { return nil }
      return state.conduits
    }
    guard let snapshot else { return }
    for conduit in snapshot { conduit.deliver(value) }
    drain()
  }

  @usableFromInline func send(completion: Subscribers.Completion<Failure>) {
    let isFirst = state.withLockUnchecked { state in
      guard state.completion == nil else { return false }
      state.completion = completion
      return true
    }
    if isFirst { enqueue(.completion(completion)) }
  }

  @usableFromInline func send(subscription: any Subscription) {
    let accepted = state.withLockUnchecked { state in
      guard state.completion == nil else { return false }
      state.upstreams.append(subscription)
      return true
    }
    if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
  }

  @inlinable @inline(__always) func attach<S: Subscriber>(_ subscriber: S)
  where S.Input == Output, S.Failure == Failure {
    let keepsLatest = state.withLockUnchecked { $0.keepsLatest }
    enqueue(.attach(SubjectConduit(core: self, subscriber: subscriber, keepsLatest: keepsLatest)))
  }

  @inlinable func enqueue(_ event: Event) {
    let isDeliverer = state.withLockUnchecked { delivery.enqueue(event, in: &$0.queue) }
    if isDeliverer { drain() }
  }

  @inlinable func detach(_ conduit: SubjectConduit<Output, Failure>) {
    state.withLockUnchecked { state in
      if let index = state.conduits.firstIndex(where: { $0 === conduit }) {
        state.conduits.remove(at: index)
      }
    }
  }

  /// Delivers queued events until the queue is empty; only the deliverer calls it.
  ///
  /// It takes the whole queue at once (swapping it with a spare buffer, so no allocation)
  /// and one snapshot of the subscribers for the batch, so senders racing with it cost one
  /// lock each, not two. A subscriber cancelled during the batch is skipped by its conduit;
  /// a subscriber attached during the batch joins the snapshot at its place in the order.
  @inlinable func drain() {
    delivery.drain(
      take: { batch in
        state.withLockUnchecked { state in
          delivery.take(from: &state.queue, into: &batch) ? state.conduits : nil
        }
      },
      deliver: { event, conduits in
        switch event {
        case .value(let value):
          for conduit in conduits { conduit.deliver(value) }
        case .completion(let completion):
          let finished = state.withLockUnchecked { state in
            defer {
              state.conduits = []
              state.upstreams = []
              state.deliveredCompletion = completion
            }
            return state.conduits
          }
          conduits = []
          for conduit in finished { conduit.complete(completion) }
        case .attach(let conduit):
          let (current, finished) = state.withLockUnchecked { state in
            if state.deliveredCompletion == nil { state.conduits.append(conduit) }
            conduits = state.conduits
            return (state.current, state.deliveredCompletion)
          }
          conduit.start(holding: current)
          if let finished { conduit.complete(finished) }
        case .replay(let conduit):
          conduit.deliverHeldValue()
        }
      })
  }
}

/// What a conduit tells its subscriber besides values.
@usableFromInline
enum ConduitSignal<Output, Failure: Error> {
  case subscription(any Subscription)
  case completion(Subscribers.Completion<Failure>)
}

/// One subscriber's connection to a subject: its demand, and the value a
/// `CurrentValueSubject` holds for it until it asks.
///
/// The subscriber is reached through closures made where its type is known, so the calls
/// are specialised (a generic class's overridden methods never are). The closures are
/// constants and the demand is an atomic word, so a delivery to a subscriber with unlimited
/// demand (every `sink`) takes no lock and retains nothing: one load, one call. Finite
/// demand and the held value change under `state`'s lock, which also writes the word.
///
/// `request` and `cancel` arrive through `any Subscription`, unspecialised, so what they
/// touch is not generic: `state` holds the held value type-erased in a ``ValueBox``, and
/// leaving the subject goes through `detachFromCore`, a closure made (specialised) in `init`.
/// In unspecialised code every generic type costs a metadata lookup, also in `deinit`.
///
/// The subscriber lives as long as the conduit: the subject lets go of the conduit on
/// cancel and completion, and the subscriber lets go of it (its subscription) then too, as
/// `Sink` does. Nothing is delivered once the word says cancelled.
@usableFromInline
final class SubjectConduit<Output, Failure: Error>: Subscription, @unchecked Sendable {
  // @unchecked: `demand` is atomic; the held value lives in `state` (a `Lock` Mutex),
  // which is also the only writer of `demand`; the entry points and `core` are immutable.

  /// The value entry point (a struct around the closure, so that it is never re-abstracted).
  @usableFromInline
  struct Receive {
    @usableFromInline let call: (Output) -> Subscribers.Demand

    @inlinable init(_ call: @escaping (Output) -> Subscribers.Demand) { self.call = call }
  }

  /// Outstanding demand, or one of the two markers below.
  @usableFromInline let demand = Atomic<UInt>(0)
  @usableFromInline static var unlimited: UInt { UInt.max - 1 }
  @usableFromInline static var cancelled: UInt { UInt.max }

  @usableFromInline let receive: Receive
  @usableFromInline let signal: (ConduitSignal<Output, Failure>) -> Void
  @usableFromInline let detachFromCore: (SubjectConduit<Output, Failure>) -> Void
  @usableFromInline let state: Lock<ConduitState>
  @usableFromInline let core: SubjectCore<Output, Failure>

  @inlinable init<S: Subscriber>(
    core: SubjectCore<Output, Failure>, subscriber: S, keepsLatest: Bool
  )
  where S.Input == Output, S.Failure == Failure {
    self.core = core
    receive = Receive { subscriber.receive($0) }
    signal = { signal in
      switch signal {
      case .subscription(let subscription): subscriber.receive(subscription: subscription)
      case .completion(let completion): subscriber.receive(completion: completion)
      }
    }
    detachFromCore = { [core] conduit in core.detach(conduit) }
    state = Lock(unchecked: ConduitState(keepsLatest: keepsLatest))
  }

  @inlinable func start(holding current: Output?) {
    let box: AnyObject? = current.map { ValueBox($0) }
    let previous = state.withLockUnchecked { state in
      defer { state.held = box }
      return state.held
    }
    withExtendedLifetime(previous) {}
    guard demand.load(ordering: .acquiring) != Self.cancelled else { return }
    signal(.subscription(self))
    if current != nil { deliverHeldValue() }
  }

  @inlinable func deliver(_ value: Output) {
    let word = demand.load(ordering: .acquiring)
    if word == Self.unlimited {
      _ = receive.call(value)
      return
    }
    if word == Self.cancelled { return }
    // Whatever `box` ends up holding is a replaced held value, released outside the lock.
    var box: AnyObject?
    let allowed = state.withLockUnchecked { state in
      let word = demand.load(ordering: .relaxed)
      if word == Self.unlimited { return true }
      guard word != Self.cancelled else { return false }
      guard word > 0 else {
        // A CurrentValueSubject keeps the newest value for when demand arrives.
        if state.keepsLatest {
          box = ValueBox(value)
          swap(&state.held, &box)
        }
        return false
      }
      demand.store(word - 1, ordering: .releasing)
      swap(&state.held, &box)
      return true
    }
    withExtendedLifetime(box) {}
    guard allowed else { return }
    let more = receive.call(value)
    if more > 0 { _ = add(more) }
  }

  @inlinable func deliverHeldValue() {
    let held: AnyObject? = state.withLockUnchecked { state in
      let word = demand.load(ordering: .relaxed)
      guard word != Self.cancelled, word > 0, let held = state.held else { return nil }
      if word != Self.unlimited { demand.store(word - 1, ordering: .releasing) }
      state.held = nil
      return held
    }
    guard let held else { return }
    let more = receive.call(unsafeDowncast(held, to: ValueBox<Output>.self).value)
    if more > 0 { _ = add(more) }
  }

  @inlinable func complete(_ completion: Subscribers.Completion<Failure>) {
    guard end() else { return }
    signal(.completion(completion))
  }

  /// Marks the conduit cancelled; `true` for the caller that did it.
  @inlinable func end() -> Bool {
    let (ended, held): (Bool, AnyObject?) = state.withLockUnchecked { state in
      defer { state.held = nil }
      let ended =
        demand.exchange(Self.cancelled, ordering: .acquiringAndReleasing) != Self.cancelled
      return (ended, state.held)
    }
    // The held value is released outside the lock: its deinit may call out.
    withExtendedLifetime(held) {}
    return ended
  }

  /// Adds demand under the lock; returns whether a held value now waits to be delivered.
  @inlinable func add(_ more: Subscribers.Demand) -> Bool {
    state.withLockUnchecked { state in
      let word = demand.load(ordering: .relaxed)
      guard word != Self.cancelled, word != Self.unlimited else { return false }
      let total = Subscribers.Demand.max(Int(word)) + more
      // A finite demand is at most Int.max, well below the two markers.
      let stored = total.max.map { UInt($0) } ?? Self.unlimited
      demand.store(stored, ordering: .releasing)
      return state.held != nil
    }
  }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    // A held value is delivered through the subject's queue so it is ordered with the
    // subject's other events and never delivered concurrently with them.
    if add(demand) { replayHeldValue() }
  }

  /// Out of line so that `request` computes no generic metadata unless a value is held.
  @usableFromInline @inline(never) func replayHeldValue() {
    core.enqueue(.replay(self))
  }

  @usableFromInline func cancel() {
    if end() { detachFromCore(self) }
  }
}

/// A conduit's lock-protected state; not generic (see ``SubjectConduit``).
@usableFromInline
struct ConduitState {
  /// The newest value a `CurrentValueSubject` could not deliver for lack of demand, as a
  /// ``ValueBox`` of the subject's output.
  @usableFromInline var held: AnyObject?
  /// Whether this conduit belongs to a `CurrentValueSubject`.
  @usableFromInline let keepsLatest: Bool

  @inlinable init(keepsLatest: Bool) { self.keepsLatest = keepsLatest }
}
