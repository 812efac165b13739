extension Publishers {
  /// A publisher that moves its upstream's events onto a scheduler, or times them there: the
  /// one type behind ``Publishers/ReceiveOn``, ``Publishers/SubscribeOn``,
  /// ``Publishers/Debounce``, ``Publishers/Throttle``, ``Publishers/Delay`` and
  /// ``Publishers/Timeout``.
  ///
  /// `receive(on:)`, `subscribe(on:)`, `debounce(for:scheduler:)`,
  /// `throttle(for:scheduler:latest:)`, `delay(for:scheduler:)` and `timeout(_:scheduler:)`
  /// return it; each operator's documentation says what it does with the scheduler. (Combine
  /// has a type per operator; code that calls the operators is unchanged.)
  public struct SchedulingOperator<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// The operator publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// The operator fails when its upstream fails (`timeout` may fail with its custom error).
    public typealias Failure = Upstream.Failure

    /// What the operator does with the scheduler, and the times it needs for that.
    enum Kind {
      case receiveOn
      case subscribeOn
      case debounce(dueTime: Context.SchedulerTimeType.Stride)
      case throttle(interval: Context.SchedulerTimeType.Stride, latest: Bool)
      case delay(
        interval: Context.SchedulerTimeType.Stride, tolerance: Context.SchedulerTimeType.Stride)
      case timeout(
        interval: Context.SchedulerTimeType.Stride, customError: (@Sendable () -> Failure)?)
    }

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The scheduler the operator delivers, subscribes or measures time on.
    public let scheduler: Context
    /// Scheduler options that customise the scheduled actions.
    public let options: Context.SchedulerOptions?
    let kind: Kind

    init(upstream: Upstream, scheduler: Context, options: Context.SchedulerOptions?, kind: Kind) {
      self.upstream = upstream
      self.scheduler = scheduler
      self.options = options
      self.kind = kind
    }

    /// Attaches the subscriber through the subscription that this operator schedules with.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      switch kind {
      case .receiveOn:
        upstream.subscribe(ScheduledRelay(subscriber, scheduler: scheduler, options: options))
      case .subscribeOn:
        subscribeOn(upstream, subscriber, scheduler: scheduler, options: options)
      case .debounce(let dueTime):
        upstream.subscribe(
          TimedGate(
            subscriber, gating: .debounce(dueTime: dueTime), scheduler: scheduler,
            options: options))
      case .throttle(let interval, let latest):
        upstream.subscribe(
          TimedGate(
            subscriber, gating: .throttle(interval: interval, latest: latest),
            scheduler: scheduler, options: nil))
      case .delay(let interval, let tolerance):
        upstream.subscribe(
          ScheduledRelay(
            subscriber, scheduler: scheduler, options: options,
            delay: .init(interval: interval, tolerance: tolerance)))
      case .timeout(let interval, let customError):
        upstream.subscribe(
          TimeoutInner(
            subscriber, interval: interval, scheduler: scheduler, options: options,
            customError: customError))
      }
    }
  }
}
