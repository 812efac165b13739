import Synchronization

/// The delivery engine shared by ``PassthroughSubject`` and ``CurrentValueSubject``.
///
/// Every event (a value, a completion, a new subscriber, a replay of a held value) goes
/// through one FIFO queue per subject and is delivered by exactly one thread at a time: the
/// thread that finds the subject idle becomes the deliverer and drains the queue; any other
/// sender (another thread, or a subscriber sending re-entrantly from inside `receive`)
/// appends to the queue and returns. So every subscriber sees the subject's events in the
/// same order, calls into one subscriber are never concurrent, and no lock is held while a
/// subscriber runs. The fast path (nobody delivering, queue empty) takes the lock twice per
/// value and allocates nothing.
final class SubjectCore<Output, Failure: Error>: Sendable {
  enum Event {
    case value(Output)
    case completion(Subscribers.Completion<Failure>)
    case attach(SubjectConduit<Output, Failure>)
    case replay(SubjectConduit<Output, Failure>)
  }

  struct State {
    var conduits: ContiguousArray<SubjectConduit<Output, Failure>> = []
    var queue: [Event] = []
    var isDelivering = false
    /// Set when `send(completion:)` is called: later sends are ignored at once.
    var completion: Subscribers.Completion<Failure>?
    /// Set when the completion event has been delivered: later subscribers complete at once.
    var deliveredCompletion: Subscribers.Completion<Failure>?
    /// The current value of a `CurrentValueSubject`; `nil` for a `PassthroughSubject`.
    var current: Output?
    /// Upstream subscriptions handed over with `send(subscription:)`.
    var upstreams: [any Subscription] = []
  }

  let state: Locked<State>

  init(current: Output?) {
    state = Locked(State(current: current))
  }

  var current: Output? { state.withLock { $0.current } }

  var conduitCount: Int { state.withLock { $0.conduits.count } }

  func send(_ value: Output) {
    let snapshot: ContiguousArray<SubjectConduit<Output, Failure>>? = state.withLock { state in
      guard state.completion == nil else { return nil }
      if state.current != nil { state.current = value }
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

  func send(completion: Subscribers.Completion<Failure>) {
    let isFirst = state.withLock { state in
      guard state.completion == nil else { return false }
      state.completion = completion
      return true
    }
    if isFirst { enqueue(.completion(completion)) }
  }

  func send(subscription: any Subscription) {
    let accepted = state.withLock { state in
      guard state.completion == nil else { return false }
      state.upstreams.append(subscription)
      return true
    }
    if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
  }

  func attach<S: Subscriber>(_ subscriber: S) where S.Input == Output, S.Failure == Failure {
    let keepsLatest = state.withLock { $0.current != nil }
    enqueue(.attach(Conduit(core: self, subscriber: subscriber, keepsLatest: keepsLatest)))
  }

  func enqueue(_ event: Event) {
    let isDeliverer = state.withLock { state in
      state.queue.append(event)
      if state.isDelivering { return false }
      state.isDelivering = true
      return true
    }
    if isDeliverer { drain() }
  }

  func detach(_ conduit: SubjectConduit<Output, Failure>) {
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
  private func drain() {
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
          let (current, isFinished) = state.withLock { state in
            if state.deliveredCompletion == nil { state.conduits.append(conduit) }
            conduits = state.conduits
            return (state.current, state.deliveredCompletion)
          }
          conduit.start(holding: current)
          if let isFinished { conduit.complete(isFinished) }
        case .replay(let conduit):
          conduit.deliverHeldValue()
        }
      }
      batch.removeAll(keepingCapacity: true)
    }
  }
}

/// One subscriber's connection to a subject: its demand, and the value a
/// `CurrentValueSubject` holds for it until it asks.
///
/// The class is a base with overridable delivery so that the subject's snapshot is a single
/// array type while each conduit calls its subscriber without an existential.
class SubjectConduit<Output, Failure: Error>: Subscription, @unchecked Sendable {
  // @unchecked: the only stored state lives in the subclass's `Mutex`; this class has none.
  func deliver(_ value: Output) {}
  func complete(_ completion: Subscribers.Completion<Failure>) {}
  func start(holding current: Output?) {}
  func deliverHeldValue() {}
  func request(_ demand: Subscribers.Demand) {}
  func cancel() {}
}

final class Conduit<S: Subscriber>: SubjectConduit<S.Input, S.Failure>, @unchecked Sendable {
  // @unchecked: `subscriber`, `demand` and `held` live in `state` (a Mutex); `core` is Sendable.
  typealias Output = S.Input
  typealias Failure = S.Failure

  struct State {
    var subscriber: S?
    var demand: Subscribers.Demand = .none
    /// The newest value a `CurrentValueSubject` could not deliver for lack of demand.
    var held: Output?
    /// Whether this conduit belongs to a `CurrentValueSubject`.
    var keepsLatest = false
  }

  private let state: Locked<State>
  private let core: SubjectCore<Output, Failure>

  init(core: SubjectCore<Output, Failure>, subscriber: S, keepsLatest: Bool) {
    self.core = core
    state = Locked(State(subscriber: subscriber, keepsLatest: keepsLatest))
  }

  override func start(holding current: Output?) {
    let subscriber = state.withLock { state in
      state.held = current
      return state.subscriber
    }
    subscriber?.receive(subscription: self)
    if current != nil { deliverHeldValue() }
  }

  override func deliver(_ value: Output) {
    let subscriber: S? = state.withLock { state in
      guard let subscriber = state.subscriber else { return nil }
      if state.demand == .unlimited { return subscriber }
      guard state.demand > 0 else {
        // A CurrentValueSubject keeps the newest value for when demand arrives.
        if state.keepsLatest { state.held = value }
        return nil
      }
      state.demand -= 1
      state.held = nil
      return subscriber
    }
    guard let subscriber else { return }
    let more = subscriber.receive(value)
    if more > 0 { add(more) }
  }

  override func deliverHeldValue() {
    let delivery: (S, Output)? = state.withLock { state in
      guard let subscriber = state.subscriber, state.demand > 0, let held = state.held else {
        return nil
      }
      state.demand -= 1
      state.held = nil
      return (subscriber, held)
    }
    guard let (subscriber, value) = delivery else { return }
    let more = subscriber.receive(value)
    if more > 0 { add(more) }
  }

  override func complete(_ completion: Subscribers.Completion<S.Failure>) {
    let subscriber = state.withLock { state in
      defer { state = State() }
      return state.subscriber
    }
    subscriber?.receive(completion: completion)
  }

  override func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let replay = state.withLock { state in
      guard state.subscriber != nil else { return false }
      state.demand += demand
      return state.held != nil
    }
    // A held value is delivered through the subject's queue so it is ordered with the
    // subject's other events and never delivered concurrently with them.
    if replay { core.enqueue(.replay(self)) }
  }

  private func add(_ demand: Subscribers.Demand) {
    state.withLock { state in
      if state.subscriber != nil { state.demand += demand }
    }
  }

  override func cancel() {
    // The subscriber is moved out so that its last release happens after the lock.
    let subscriber = state.withLock { state in
      defer { state = State() }
      return state.subscriber
    }
    if subscriber != nil { core.detach(self) }
  }
}
