extension Publisher {
  /// Publishes at most one value per `interval`: the first value at once, then either the
  /// newest or the first value received in each following interval.
  ///
  /// The first value, and the first value after a gap of at least `interval` since the last
  /// one published, is delivered at once through `scheduler`. Values that arrive sooner are
  /// held and delivered when `interval` has passed since the last publication: the newest of
  /// them when `latest` is `true`, the first of them when it is `false`. A value that arrives
  /// while the subscriber has no demand is dropped. Upstream is asked for unlimited values. A
  /// completion waits for a held value to be delivered first.
  ///
  /// ```swift
  /// positions.throttle(for: .milliseconds(100), scheduler: queue, latest: true)
  /// ```
  public func throttle<S: Scheduler>(
    for interval: S.SchedulerTimeType.Stride, scheduler: S, latest: Bool
  ) -> Publishers.Throttle<Self, S> {
    Publishers.Throttle(upstream: self, interval: interval, scheduler: scheduler, latest: latest)
  }
}

extension Publishers {
  /// A publisher that publishes either the newest or the first value received in each time
  /// interval.
  public struct Throttle<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// The kind of values published: the upstream's.
    public typealias Output = Upstream.Output
    /// The kind of errors published: the upstream's.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The interval in which to find and emit the newest or first element.
    public let interval: Context.SchedulerTimeType.Stride
    /// The scheduler on which to publish elements.
    public let scheduler: Context
    /// Whether to publish the newest element (`true`) or the first one (`false`) of an
    /// interval.
    public let latest: Bool

    /// Creates a publisher that throttles `upstream` to one value per `interval`.
    public init(
      upstream: Upstream, interval: Context.SchedulerTimeType.Stride, scheduler: Context,
      latest: Bool
    ) {
      self.upstream = upstream
      self.interval = interval
      self.scheduler = scheduler
      self.latest = latest
    }

    /// Attaches the subscriber through a subscription that throttles values.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ThrottleInner(subscriber, publisher: self))
    }
  }
}

private final class ThrottleInner<Downstream: Subscriber, Context: Scheduler>: Subscriber,
  Subscription, ScheduledTarget
{
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  enum Scheduled {
    /// Publish the held value (and a completion waiting behind it).
    case emit
    case completion(Subscribers.Completion<Failure>)
  }

  private struct State {
    var demand = Subscribers.Demand.none
    var held: Input?
    var lastEmission: Context.SchedulerTimeType?
    var isEmissionScheduled = false
    var pendingCompletion: Subscribers.Completion<Failure>?
    var isTerminal = false
  }

  private enum Plan {
    case now
    case at(Context.SchedulerTimeType)
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let state = Locked(State())
  private let interval: Context.SchedulerTimeType.Stride
  private let scheduler: Context
  private let latest: Bool

  init<Upstream>(_ downstream: Downstream, publisher: Publishers.Throttle<Upstream, Context>) {
    self.downstream = SerializedDownstream(downstream)
    interval = publisher.interval
    scheduler = publisher.scheduler
    latest = publisher.latest
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    addDemand(downstream.send(.subscription(self)))
    subscription.request(.unlimited)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    let now = scheduler.now
    let plan = state.withLock { state -> Plan? in
      guard !state.isTerminal, state.pendingCompletion == nil, state.demand > .none else {
        return nil
      }
      if latest || state.held == nil { state.held = input }
      guard !state.isEmissionScheduled else { return nil }
      state.isEmissionScheduled = true
      guard let last = state.lastEmission else { return .now }
      let next = last.advanced(by: interval)
      return next <= now ? .now : .at(next)
    }
    switch plan {
    case .now?:
      scheduler.schedule(options: nil, Scheduled.emit, to: self)
    case .at(let date)?:
      scheduler.schedule(
        after: date, tolerance: scheduler.minimumTolerance, options: nil, Scheduled.emit,
        to: self)
    case nil:
      break
    }
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    let deliverNow = state.withLock { state -> Bool in
      guard !state.isTerminal, state.pendingCompletion == nil else { return false }
      if state.isEmissionScheduled {
        state.pendingCompletion = completion
        return false
      }
      state.isTerminal = true
      return true
    }
    if deliverNow { scheduler.schedule(options: nil, .completion(completion), to: self) }
  }

  func receiveScheduled(_ event: Scheduled) {
    switch event {
    case .emit:
      let now = scheduler.now
      let (value, completion) = state.withLock {
        state -> (Input?, Subscribers.Completion<Failure>?) in
        guard !state.isTerminal else { return (nil, nil) }
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
    state.withLock { state in
      state.isTerminal = true
      state.held = nil
    }
    downstream.cancel()
    upstream.cancel()
  }

  private func addDemand(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    state.withLock { $0.demand += demand }
  }
}
