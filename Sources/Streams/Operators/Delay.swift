extension Publisher {
  /// Delays delivery of every value and of the completion by `interval`, on `scheduler`.
  ///
  /// Each event is scheduled for `scheduler.now` plus `interval` when it arrives, so the
  /// gaps between events are kept. The subscription is delivered at once and demand goes
  /// upstream unchanged.
  ///
  /// ```swift
  /// subject.delay(for: .milliseconds(500), scheduler: queue).sink { print($0) }
  /// ```
  public func delay<S: Scheduler>(
    for interval: S.SchedulerTimeType.Stride,
    tolerance: S.SchedulerTimeType.Stride? = nil,
    scheduler: S,
    options: S.SchedulerOptions? = nil
  ) -> Publishers.Delay<Self, S> {
    Publishers.Delay(
      upstream: self, scheduler: scheduler, options: options,
      kind: .delay(interval: interval, tolerance: tolerance ?? scheduler.minimumTolerance))
  }
}

extension Publishers {
  /// A publisher that delays delivery of its upstream's events by a fixed interval.
  public typealias Delay<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}
