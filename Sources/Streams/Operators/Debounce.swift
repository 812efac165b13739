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
      upstream.subscribe(
        TimedGate(
          subscriber, gating: .debounce(dueTime: dueTime), scheduler: scheduler, options: options))
    }
  }
}
