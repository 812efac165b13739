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
    Publishers.Debounce(
      upstream: self, scheduler: scheduler, options: options, kind: .debounce(dueTime: dueTime))
  }
}

extension Publishers {
  /// A publisher that publishes a value only after a quiet period with no other value.
  public typealias Debounce<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}
