import TetherSupport

extension Publishers {
  /// A timer that needs no run loop: it publishes the scheduler's time every `interval`,
  /// from a repeating action on a `Scheduler` (a `DispatchQueue` in production, a
  /// `TestScheduler` in tests).
  ///
  /// Each subscription has its own timer, which starts with the subscriber's first demand;
  /// a tick that finds no demand is dropped, as Combine's timers do. It never completes;
  /// cancel the subscription to stop it.
  ///
  /// ```swift
  /// Publishers.Interval(every: .seconds(1), scheduler: DispatchQueue.global())
  ///   .sink { refresh(at: $0) }
  /// ```
  public struct Interval<Context: Scheduler>: Publisher, Sendable {
    /// Each tick publishes the scheduler's time.
    public typealias Output = Context.SchedulerTimeType
    /// A timer never fails.
    public typealias Failure = Never

    /// The time between ticks.
    public let interval: Context.SchedulerTimeType.Stride
    /// How late a tick may be, to let the system save energy.
    public let tolerance: Context.SchedulerTimeType.Stride?
    /// The scheduler that runs the timer.
    public let scheduler: Context
    /// Options for the scheduler's repeating action.
    public let options: Context.SchedulerOptions?

    /// Creates a timer that ticks every `interval` on `scheduler`.
    public init(
      every interval: Context.SchedulerTimeType.Stride,
      tolerance: Context.SchedulerTimeType.Stride? = nil, scheduler: Context,
      options: Context.SchedulerOptions? = nil
    ) {
      self.interval = interval
      self.tolerance = tolerance
      self.scheduler = scheduler
      self.options = options
    }

    /// Attaches the subscriber to a new timer.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let subscription = IntervalSubscription(subscriber, publisher: self)
      subscription.start()
    }
  }
}

private final class IntervalSubscription<Downstream: Subscriber, Context: Scheduler>:
  Subscription, ScheduledTarget
where Downstream.Input == Context.SchedulerTimeType, Downstream.Failure == Never {
  private struct State {
    var demand = Subscribers.Demand.none
    var timer: (any Cancellable)?
    var isStarted = false
    var isCancelled = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let state = Lock(unchecked: State())
  private let publisher: Publishers.Interval<Context>

  init(_ downstream: Downstream, publisher: Publishers.Interval<Context>) {
    self.downstream = SerializedDownstream(downstream)
    self.publisher = publisher
  }

  deinit {
    state.withLockUnchecked { $0.timer }?.cancel()
  }

  func start() {
    addDemand(downstream.send(.subscription(self)))
  }

  /// A tick: publish the time if the subscriber asked for it.
  func receiveScheduled(_: Void) {
    let deliver = state.withLockUnchecked { state -> Bool in
      guard !state.isCancelled, state.demand > .none else { return false }
      state.demand -= 1
      return true
    }
    if deliver { addDemand(downstream.send(.value(publisher.scheduler.now))) }
  }

  func request(_ demand: Subscribers.Demand) { addDemand(demand) }

  func cancel() {
    let timer = state.withLockUnchecked { state -> (any Cancellable)? in
      state.isCancelled = true
      defer { state.timer = nil }
      return state.timer
    }
    timer?.cancel()
    downstream.cancel()
  }

  private func addDemand(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let start = state.withLockUnchecked { state -> Bool in
      guard !state.isCancelled else { return false }
      state.demand += demand
      defer { state.isStarted = true }
      return !state.isStarted
    }
    guard start else { return }
    // The action holds this subscription weakly: the subscriber owns it, and dropping it
    // stops the timer (see deinit).
    let target = WeakTarget<Void>(self)
    let scheduler = publisher.scheduler
    let timer = scheduler.schedule(
      after: scheduler.now.advanced(by: publisher.interval), interval: publisher.interval,
      tolerance: publisher.tolerance ?? scheduler.minimumTolerance, options: publisher.options
    ) { target.receiveScheduled(()) }
    let live = state.withLockUnchecked { state -> Bool in
      guard !state.isCancelled else { return false }
      state.timer = timer
      return true
    }
    if !live { timer.cancel() }
  }
}
