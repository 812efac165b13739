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
    Publishers.Throttle(
      upstream: self, scheduler: scheduler, options: nil,
      kind: .throttle(interval: interval, latest: latest))
  }
}

extension Publishers {
  /// A publisher that publishes either the newest or the first value received in each time
  /// interval.
  public typealias Throttle<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}
