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
    Publishers.MeasureInterval(
      upstream: self, step: ElementStepMeasureInterval(scheduler: scheduler))
  }
}

extension Publishers {
  /// A publisher that measures and publishes the time between elements.
  public typealias MeasureInterval<Upstream: Publisher, Context: Scheduler> = ElementOperator<
    ElementStepMeasureInterval<Upstream, Context>
  >
}

/// The step of `measureInterval`: for each element, the time since the previous one (for the
/// first, since the subscription), read from `scheduler`'s clock.
public struct ElementStepMeasureInterval<Upstream: Publisher, Context: Scheduler>: ElementStep {
  /// The time since the previous element.
  public typealias Output = Context.SchedulerTimeType.Stride
  /// The operator fails when its upstream fails.
  public typealias Failure = Upstream.Failure

  @usableFromInline let scheduler: Context
  /// Set by `start()`, when the subscription arrives.
  @usableFromInline var last: Context.SchedulerTimeType

  init(scheduler: Context) {
    self.scheduler = scheduler
    last = scheduler.now
  }

  /// Starts the clock for the first element.
  public mutating func start() { last = scheduler.now }

  /// The time since the previous element.
  public mutating func next(_ input: Upstream.Output) -> Output? {
    let now = scheduler.now
    defer { last = now }
    return last.distance(to: now)
  }
}
