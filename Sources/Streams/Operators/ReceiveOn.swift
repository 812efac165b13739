extension Publisher {
  /// Delivers values and the completion to the subscriber through `scheduler`.
  ///
  /// Each value and the completion is handed to `scheduler.schedule(options:_:)` as it
  /// arrives, so the subscriber sees them on the scheduler's context, in order when the
  /// scheduler is serial. The subscription itself is delivered at once, on the subscribing
  /// thread, and demand goes upstream unchanged.
  ///
  /// ```swift
  /// subject.receive(on: DispatchQueue(label: "ui")).sink { render($0) }
  /// ```
  public func receive<S: Scheduler>(
    on scheduler: S, options: S.SchedulerOptions? = nil
  ) -> Publishers.ReceiveOn<Self, S> {
    Publishers.ReceiveOn(upstream: self, scheduler: scheduler, options: options)
  }
}

extension Publishers {
  /// A publisher that delivers its upstream's values and completion through a scheduler.
  public struct ReceiveOn<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// The kind of values published: the upstream's.
    public typealias Output = Upstream.Output
    /// The kind of errors published: the upstream's.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The scheduler the publisher uses to deliver elements.
    public let scheduler: Context
    /// Scheduler options that customise the delivery of elements.
    public let options: Context.SchedulerOptions?

    /// Creates a publisher that delivers `upstream`'s events through `scheduler`.
    public init(upstream: Upstream, scheduler: Context, options: Context.SchedulerOptions?) {
      self.upstream = upstream
      self.scheduler = scheduler
      self.options = options
    }

    /// Attaches the subscriber through a subscription that reschedules every event.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ScheduledRelay(subscriber, scheduler: scheduler, options: options))
    }
  }
}
