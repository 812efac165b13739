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
  // Sendable: the only stored property is `state`, a `Locked` (a Mutex).
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
    @usableFromInline var queue: [Event] = []
    @usableFromInline var isDelivering = false
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

  @usableFromInline let state: Locked<State>

  @inlinable init(current: Output?) {
    state = Locked(State(current: current))
  }

  @inlinable var current: Output? { state.withLock { $0.current } }

  @usableFromInline var conduitCount: Int { state.withLock { $0.conduits.count } }

  @inlinable func send(_ value: Output) {
    let snapshot: ContiguousArray<SubjectConduit<Output, Failure>>? = state.withLock { state in
      guard state.completion == nil else { return nil }
      if state.keepsLatest { state.current = value }
      if state.isDelivering {
        state.queue.append(.value(value))
        return nil
      }
      state.isDelivering = true
      return state.conduits
    }
    guard let snapshot else { return }
    for conduit in snapshot { conduit.deliver(value) }
    drain()
  }

  @usableFromInline func send(completion: Subscribers.Completion<Failure>) {
    let isFirst = state.withLock { state in
      guard state.completion == nil else { return false }
      state.completion = completion
      return true
    }
    if isFirst { enqueue(.completion(completion)) }
  }

  @usableFromInline func send(subscription: any Subscription) {
    let accepted = state.withLock { state in
      guard state.completion == nil else { return false }
      state.upstreams.append(subscription)
      return true
    }
    if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
  }

  @inlinable @inline(__always) func attach<S: Subscriber>(_ subscriber: S)
  where S.Input == Output, S.Failure == Failure {
    let keepsLatest = state.withLock { $0.keepsLatest }
    enqueue(.attach(SubjectConduit(core: self, subscriber: subscriber, keepsLatest: keepsLatest)))
  }

  @inlinable func enqueue(_ event: Event) {
    let isDeliverer = state.withLock { state in
      state.queue.append(event)
      if state.isDelivering { return false }
      state.isDelivering = true
      return true
    }
    if isDeliverer { drain() }
  }

  @usableFromInline func detach(_ conduit: SubjectConduit<Output, Failure>) {
    state.withLock { state in
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
    var batch: [Event] = []
    while true {
      var conduits: ContiguousArray<SubjectConduit<Output, Failure>> = []
      let hasWork = state.withLock { state in
        guard !state.queue.isEmpty else {
          state.isDelivering = false
          return false
        }
        swap(&state.queue, &batch)
        conduits = state.conduits
        return true
      }
      guard hasWork else { return }
      for event in batch {
        switch event {
        case .value(let value):
          for conduit in conduits { conduit.deliver(value) }
        case .completion(let completion):
          let finished = state.withLock { state in
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
          let (current, finished) = state.withLock { state in
            if state.deliveredCompletion == nil { state.conduits.append(conduit) }
            conduits = state.conduits
            return (state.current, state.deliveredCompletion)
          }
          conduit.start(holding: current)
          if let finished { conduit.complete(finished) }
        case .replay(let conduit):
          conduit.deliverHeldValue()
        }
      }
      batch.removeAll(keepingCapacity: true)
    }
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
/// The subscriber is reached through a closure made where the subscriber's type is known, so
/// the call is specialised (a generic class's overridden methods never are).
@usableFromInline
final class SubjectConduit<Output, Failure: Error>: Subscription, @unchecked Sendable {
  // @unchecked: the subscriber, demand and held value live in `state` (a `Locked` Mutex);
  // `core` is Sendable.
  /// The subscriber's entry points: values go through their own closure (a generic value
  /// passed as is), the rarer signals through another. A struct around the closures, so that
  /// moving them in and out of the generic lock never re-abstracts (and so never allocates)
  /// them.
  @usableFromInline
  struct Target {
    @usableFromInline let receive: (Output) -> Subscribers.Demand
    @usableFromInline let signal: (ConduitSignal<Output, Failure>) -> Void

    @inlinable init<S: Subscriber>(_ subscriber: S) where S.Input == Output, S.Failure == Failure {
      receive = { subscriber.receive($0) }
      signal = { signal in
        switch signal {
        case .subscription(let subscription): subscriber.receive(subscription: subscription)
        case .completion(let completion): subscriber.receive(completion: completion)
        }
      }
    }
  }

  @usableFromInline
  struct State {
    @usableFromInline var target: Target?
    @usableFromInline var demand: Subscribers.Demand = .none
    /// The newest value a `CurrentValueSubject` could not deliver for lack of demand.
    @usableFromInline var held: Output?
    /// Whether this conduit belongs to a `CurrentValueSubject`.
    @usableFromInline var keepsLatest: Bool

    @inlinable init(target: Target?, keepsLatest: Bool) {
      self.target = target
      self.keepsLatest = keepsLatest
    }
  }

  @usableFromInline let state: Locked<State>
  @usableFromInline let core: SubjectCore<Output, Failure>

  @inlinable init<S: Subscriber>(
    core: SubjectCore<Output, Failure>, subscriber: S, keepsLatest: Bool
  )
  where S.Input == Output, S.Failure == Failure {
    self.core = core
    state = Locked(State(target: Target(subscriber), keepsLatest: keepsLatest))
  }

  @inlinable func start(holding current: Output?) {
    let target = state.withLock { state in
      state.held = current
      return state.target
    }
    target?.signal(.subscription(self))
    if current != nil { deliverHeldValue() }
  }

  @inlinable func deliver(_ value: Output) {
    let target: Target? = state.withLock { state in
      guard let target = state.target else { return nil }
      if state.demand == .unlimited { return target }
      guard state.demand > 0 else {
        // A CurrentValueSubject keeps the newest value for when demand arrives.
        if state.keepsLatest { state.held = value }
        return nil
      }
      state.demand -= 1
      state.held = nil
      return target
    }
    guard let target else { return }
    let more = target.receive(value)
    if more > 0 { add(more) }
  }

  @inlinable func deliverHeldValue() {
    let delivery: (Target, Output)? = state.withLock { state in
      guard let target = state.target, state.demand > 0, let held = state.held else {
        return nil
      }
      state.demand -= 1
      state.held = nil
      return (target, held)
    }
    guard let (target, value) = delivery else { return }
    let more = target.receive(value)
    if more > 0 { add(more) }
  }

  @inlinable func complete(_ completion: Subscribers.Completion<Failure>) {
    // The target is moved out so that the subscriber's last release happens after the lock.
    let target = state.withLock { state in
      defer { state = State(target: nil, keepsLatest: false) }
      return state.target
    }
    target?.signal(.completion(completion))
  }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let replay = state.withLock { state in
      guard state.target != nil else { return false }
      state.demand += demand
      return state.held != nil
    }
    // A held value is delivered through the subject's queue so it is ordered with the
    // subject's other events and never delivered concurrently with them.
    if replay { core.enqueue(.replay(self)) }
  }

  @inlinable func add(_ demand: Subscribers.Demand) {
    state.withLock { state in
      if state.target != nil { state.demand += demand }
    }
  }

  @usableFromInline func cancel() {
    let target = state.withLock { state in
      defer { state = State(target: nil, keepsLatest: false) }
      return state.target
    }
    if target != nil { core.detach(self) }
  }
}
