extension Publisher {
  /// Publishes, for each element, the time since the previous element (for the first one,
  /// since the subscription), measured by `scheduler`'s clock.
  ///
  /// Elements are replaced by the intervals, on the upstream's thread; demand passes through
  /// unchanged.
  ///
  /// ```swift
  /// taps.measureInterval(using: DispatchQueue.main).sink { print("\($0) since the last tap") }
  /// ```
  public func measureInterval<S: Scheduler>(
    using scheduler: S, options: S.SchedulerOptions? = nil
  ) -> Publishers.MeasureInterval<Self, S> {
    Publishers.MeasureInterval(upstream: self, scheduler: scheduler)
  }
}

extension Publishers {
  /// A publisher that measures and publishes the time between elements.
  public struct MeasureInterval<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// The time since the previous element.
    public typealias Output = Context.SchedulerTimeType.Stride
    /// MeasureInterval fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The scheduler whose clock measures the intervals.
    public let scheduler: Context

    /// Creates a publisher that measures the intervals between `upstream`'s elements.
    public init(upstream: Upstream, scheduler: Context) {
      self.upstream = upstream
      self.scheduler = scheduler
    }

    /// Attaches the subscriber behind a stage that reads the clock at each element.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        MeasureIntervalInner<Upstream.Output, S, Context>(
          downstream: subscriber, scheduler: scheduler))
    }
  }
}

private final class MeasureIntervalInner<Input, Downstream: Subscriber, Context: Scheduler>:
  Subscriber
where Downstream.Input == Context.SchedulerTimeType.Stride {
  typealias Failure = Downstream.Failure

  private let downstream: Downstream
  private let scheduler: Context
  /// Set when subscribed, then touched only in `receive(_:)`, whose calls the upstream
  /// serialises after the subscription.
  private var last: Context.SchedulerTimeType

  init(downstream: Downstream, scheduler: Context) {
    self.downstream = downstream
    self.scheduler = scheduler
    last = scheduler.now
  }

  func receive(subscription: any Subscription) {
    last = scheduler.now
    downstream.receive(subscription: subscription)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    let now = scheduler.now
    defer { last = now }
    return downstream.receive(last.distance(to: now))
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    downstream.receive(completion: completion)
  }
}
