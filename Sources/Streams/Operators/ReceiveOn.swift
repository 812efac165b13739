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
    Publishers.ReceiveOn(upstream: self, scheduler: scheduler, options: options, kind: .receiveOn)
  }
}

extension Publishers {
  /// A publisher that delivers its upstream's values and completion through a scheduler.
  public typealias ReceiveOn<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}
