import TetherSupport

/// When a ``TimedGate`` lets a value through.
enum TimedGating<Stride: Sendable>: Sendable {
  /// `debounce`: every value restarts a quiet period of `dueTime`; when one ends, the last
  /// value is published. A completion is delivered at once and drops a waiting value.
  case debounce(dueTime: Stride)
  /// `throttle`: at most one value per `interval`. A value that finds the last publication
  /// at least `interval` ago goes at once; sooner ones are held until the interval has
  /// passed, the newest of them kept when `latest`, the first otherwise. A value that arrives
  /// without demand is dropped, and a completion waits for a held value to go first.
  case throttle(interval: Stride, latest: Bool)
}

/// The subscription behind `debounce` and `throttle`: it holds at most one value and
/// publishes it through the scheduler when the ``TimedGating`` says it is due, if the
/// subscriber has demand for it then (otherwise the value is dropped, as in Combine).
///
/// Upstream is asked for unlimited values; completions, like values, reach the subscriber
/// through the scheduler.
final class TimedGate<Downstream: Subscriber, Context: Scheduler>: Subscriber, Subscription,
  ScheduledTarget
{
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure
  typealias Time = Context.SchedulerTimeType

  enum Scheduled {
    /// The held value of this generation is due; a later value superseded an older one.
    case emit(UInt64)
    case completion(Subscribers.Completion<Failure>)
  }

  private struct State {
    var demand = Subscribers.Demand.none
    var held: Input?
    /// Counts debounced values: a due emission of an older one does nothing.
    var generation: UInt64 = 0
    /// Throttle: when the last emission went, and whether the next one is scheduled (a
    /// completion then waits for it in `pendingCompletion`).
    var lastEmission: Time?
    var isEmissionScheduled = false
    var pendingCompletion: Subscribers.Completion<Failure>?
    var isTerminal = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let state = Lock(unchecked: State())
  private let gating: TimedGating<Time.Stride>
  private let scheduler: Context
  private let options: Context.SchedulerOptions?

  init(
    _ downstream: Downstream, gating: TimedGating<Time.Stride>, scheduler: Context,
    options: Context.SchedulerOptions?
  ) {
    self.downstream = SerializedDownstream(downstream)
    self.gating = gating
    self.scheduler = scheduler
    self.options = options
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    addDemand(downstream.send(.subscription(self)))
    subscription.request(.unlimited)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    let now = scheduler.now
    // When to emit (`nil`: at once), and the generation the emission is for.
    let due = state.withLockUnchecked { state -> (at: Time?, generation: UInt64)? in
      guard !state.isTerminal else { return nil }
      switch gating {
      case .debounce(let dueTime):
        state.generation += 1
        state.held = input
        return (now.advanced(by: dueTime), state.generation)
      case .throttle(let interval, let latest):
        guard state.pendingCompletion == nil, state.demand > .none else { return nil }
        if latest || state.held == nil { state.held = input }
        guard !state.isEmissionScheduled else { return nil }
        state.isEmissionScheduled = true
        guard let next = state.lastEmission?.advanced(by: interval), now < next else {
          return (nil, state.generation)
        }
        return (next, state.generation)
      }
    }
    switch due {
    case (let date?, let generation)?:
      scheduler.schedule(
        after: date, tolerance: scheduler.minimumTolerance, options: options, .emit(generation),
        to: self)
    case (nil, let generation)?:
      scheduler.schedule(options: options, Scheduled.emit(generation), to: self)
    case nil:
      break
    }
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    let deliverNow = state.withLockUnchecked { state -> Bool in
      guard !state.isTerminal, state.pendingCompletion == nil else { return false }
      if state.isEmissionScheduled {
        state.pendingCompletion = completion
        return false
      }
      state.isTerminal = true
      state.held = nil
      return true
    }
    if deliverNow { scheduler.schedule(options: options, .completion(completion), to: self) }
  }

  func receiveScheduled(_ event: Scheduled) {
    switch event {
    case .emit(let generation):
      let now = scheduler.now
      let (value, completion) = state.withLockUnchecked {
        state -> (Input?, Subscribers.Completion<Failure>?) in
        guard !state.isTerminal, state.generation == generation else { return (nil, nil) }
        state.isEmissionScheduled = false
        state.lastEmission = now
        var value = state.held.take()
        if value != nil {
          if state.demand > .none {
            state.demand -= 1
          } else {
            value = nil
          }
        }
        let completion = state.pendingCompletion.take()
        if completion != nil { state.isTerminal = true }
        return (value, completion)
      }
      if let value { addDemand(downstream.send(.value(value))) }
      if let completion { downstream.send(.completion(completion)) }
    case .completion(let completion):
      downstream.send(.completion(completion))
    }
  }

  func request(_ demand: Subscribers.Demand) {
    addDemand(demand)
  }

  func cancel() {
    state.withLockUnchecked { state in
      state.isTerminal = true
      state.held = nil
    }
    downstream.cancel()
    upstream.cancel()
  }

  private func addDemand(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    state.withLockUnchecked { $0.demand += demand }
  }
}
