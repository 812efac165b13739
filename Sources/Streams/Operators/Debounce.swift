extension Publisher {
  /// Publishes a value only after `dueTime` has passed without another value arriving.
  ///
  /// Every value restarts the quiet period; when it ends, the last value is delivered through
  /// `scheduler` (if the subscriber has demand for it; otherwise it is dropped). Upstream is
  /// asked for unlimited values. A completion is delivered through `scheduler` as soon as it
  /// arrives, and a value still waiting for its quiet period is dropped, as in Combine.
  ///
  /// ```swift
  /// searchText.debounce(for: .milliseconds(300), scheduler: queue).sink { search($0) }
  /// ```
  public func debounce<S: Scheduler>(
    for dueTime: S.SchedulerTimeType.Stride, scheduler: S, options: S.SchedulerOptions? = nil
  ) -> Publishers.Debounce<Self, S> {
    Publishers.Debounce(upstream: self, dueTime: dueTime, scheduler: scheduler, options: options)
  }
}

extension Publishers {
  /// A publisher that publishes a value only after a quiet period with no other value.
  public struct Debounce<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// The kind of values published: the upstream's.
    public typealias Output = Upstream.Output
    /// The kind of errors published: the upstream's.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The amount of time the publisher waits after a value before publishing it.
    public let dueTime: Context.SchedulerTimeType.Stride
    /// The scheduler on which this publisher delivers elements.
    public let scheduler: Context
    /// Scheduler options that customise this publisher's delivery of elements.
    public let options: Context.SchedulerOptions?

    /// Creates a publisher that debounces `upstream` by `dueTime` on `scheduler`.
    public init(
      upstream: Upstream, dueTime: Context.SchedulerTimeType.Stride, scheduler: Context,
      options: Context.SchedulerOptions?
    ) {
      self.upstream = upstream
      self.dueTime = dueTime
      self.scheduler = scheduler
      self.options = options
    }

    /// Attaches the subscriber through a subscription that debounces values.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(DebounceInner(subscriber, publisher: self))
    }
  }
}

private final class DebounceInner<Downstream: Subscriber, Context: Scheduler>: Subscriber,
  Subscription, ScheduledTarget
{
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  enum Scheduled {
    /// The quiet period of the value with this generation ended.
    case due(UInt64)
    case completion(Subscribers.Completion<Failure>)
  }

  private struct State {
    var demand = Subscribers.Demand.none
    var pending: Input?
    /// Counts values; a due action for an older generation has been superseded.
    var generation: UInt64 = 0
    var isTerminal = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let state = Locked(State())
  private let dueTime: Context.SchedulerTimeType.Stride
  private let scheduler: Context
  private let options: Context.SchedulerOptions?

  init<Upstream>(_ downstream: Downstream, publisher: Publishers.Debounce<Upstream, Context>) {
    self.downstream = SerializedDownstream(downstream)
    dueTime = publisher.dueTime
    scheduler = publisher.scheduler
    options = publisher.options
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    addDemand(downstream.send(.subscription(self)))
    subscription.request(.unlimited)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    let generation = state.withLock { state -> UInt64? in
      guard !state.isTerminal else { return nil }
      state.generation += 1
      state.pending = input
      return state.generation
    }
    if let generation {
      scheduler.schedule(
        after: scheduler.now.advanced(by: dueTime), tolerance: scheduler.minimumTolerance,
        options: options, .due(generation), to: self)
    }
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    let live = state.withLock { state in
      defer {
        state.isTerminal = true
        state.pending = nil
      }
      return !state.isTerminal
    }
    if live { scheduler.schedule(options: options, .completion(completion), to: self) }
  }

  func receiveScheduled(_ event: Scheduled) {
    switch event {
    case .due(let generation):
      let value = state.withLock { state -> Input? in
        guard !state.isTerminal, state.generation == generation, let value = state.pending
        else { return nil }
        state.pending = nil
        // Without demand the value is dropped, as Combine does.
        guard state.demand > .none else { return nil }
        state.demand -= 1
        return value
      }
      if let value { addDemand(downstream.send(.value(value))) }
    case .completion(let completion):
      downstream.send(.completion(completion))
    }
  }

  func request(_ demand: Subscribers.Demand) {
    addDemand(demand)
  }

  func cancel() {
    state.withLock { state in
      state.isTerminal = true
      state.pending = nil
    }
    downstream.cancel()
    upstream.cancel()
  }

  private func addDemand(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    state.withLock { $0.demand += demand }
  }
}
