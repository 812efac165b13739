import TetherSupport

extension Publisher {
  /// Ends the stream if the upstream publishes nothing for `interval`: finishes, or fails
  /// with `customError()` when given, and cancels upstream.
  ///
  /// The clock starts at subscription and restarts with every element. The timeout and its
  /// completion run on `scheduler`; elements pass through on the upstream's thread.
  ///
  /// ```swift
  /// reply.timeout(.seconds(5), scheduler: queue, customError: { RequestError.timedOut })
  /// ```
  public func timeout<S: Scheduler>(
    _ interval: S.SchedulerTimeType.Stride, scheduler: S, options: S.SchedulerOptions? = nil,
    customError: (@Sendable () -> Failure)? = nil
  ) -> Publishers.Timeout<Self, S> {
    Publishers.Timeout(
      upstream: self, scheduler: scheduler, options: options,
      kind: .timeout(interval: interval, customError: customError))
  }
}

extension Publishers {
  /// A publisher that ends the stream when its upstream is silent for too long.
  public typealias Timeout<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}

final class TimeoutInner<Downstream: Subscriber, Context: Scheduler>: Subscriber,
  Subscription, ScheduledTarget
{
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  private struct State {
    /// Counts elements; a timer for an older generation has been superseded.
    var generation: UInt64 = 0
    var isTerminal = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let state = Lock(unchecked: State())
  private let interval: Context.SchedulerTimeType.Stride
  private let scheduler: Context
  private let options: Context.SchedulerOptions?
  private let customError: (@Sendable () -> Failure)?

  init(
    _ downstream: Downstream, interval: Context.SchedulerTimeType.Stride, scheduler: Context,
    options: Context.SchedulerOptions?, customError: (@Sendable () -> Failure)?
  ) {
    self.downstream = SerializedDownstream(downstream)
    self.interval = interval
    self.scheduler = scheduler
    self.options = options
    self.customError = customError
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    startTimer(generation: 0)
    upstream.request(downstream.send(.subscription(self)))
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    let generation = state.withLockUnchecked { state -> UInt64? in
      guard !state.isTerminal else { return nil }
      state.generation += 1
      return state.generation
    }
    guard let generation else { return .none }
    startTimer(generation: generation)
    return downstream.send(.value(input))
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    state.withLockUnchecked { $0.isTerminal = true }
    downstream.send(.completion(completion))
  }

  /// A timer fired.
  func receiveScheduled(_ generation: UInt64) {
    let timedOut = state.withLockUnchecked { state -> Bool in
      guard !state.isTerminal, state.generation == generation else { return false }
      state.isTerminal = true
      return true
    }
    guard timedOut else { return }
    upstream.cancel()
    downstream.send(.completion(customError.map { .failure($0()) } ?? .finished))
  }

  func request(_ demand: Subscribers.Demand) { upstream.request(demand) }

  func cancel() {
    state.withLockUnchecked { $0.isTerminal = true }
    downstream.cancel()
    upstream.cancel()
  }

  /// Schedules the timeout for `generation`; the action holds this subscription weakly, so a
  /// pending timer does not keep a cancelled or completed stream alive.
  private func startTimer(generation: UInt64) {
    let target = WeakTarget<UInt64>(self)
    scheduler.schedule(
      after: scheduler.now.advanced(by: interval), tolerance: scheduler.minimumTolerance,
      options: options
    ) { target.receiveScheduled(generation) }
  }
}
