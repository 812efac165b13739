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
      upstream.subscribe(
        TimedGate(
          subscriber, gating: .throttle(interval: interval, latest: latest), scheduler: scheduler,
          options: nil))
    }
  }
}
