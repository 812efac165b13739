import TetherSupport

extension Publishers {
  /// How `collect(_:options:)` cuts its groups: at every tick of a scheduler, or also when a
  /// group reaches a count.
  public enum TimeGroupingStrategy<Context: Scheduler>: Sendable {
    /// Publishes the elements collected during each `stride` on `scheduler`.
    case byTime(Context, Context.SchedulerTimeType.Stride)
    /// Publishes the elements collected during each `stride`, or as soon as there are
    /// `count` of them.
    case byTimeOrCount(Context, Context.SchedulerTimeType.Stride, Int)
  }
}

extension Publisher {
  /// Collects elements into arrays cut by time (or by time or count) and publishes each
  /// non-empty array.
  ///
  /// Upstream is asked for every element. A group that is ready while the subscriber has no
  /// demand waits, in order, until it asks: nothing is dropped. When the upstream finishes,
  /// the groups waiting and the last partial group are published, then the completion; a
  /// failure is forwarded at once and drops them.
  ///
  /// ```swift
  /// events.collect(.byTimeOrCount(queue, .seconds(1), 100)).sink { upload($0) }
  /// ```
  public func collect<S: Scheduler>(
    _ strategy: Publishers.TimeGroupingStrategy<S>, options: S.SchedulerOptions? = nil
  ) -> Publishers.CollectByTime<Self, S> {
    Publishers.CollectByTime(upstream: self, strategy: strategy, options: options)
  }
}

extension Publishers {
  /// A publisher that groups its upstream's elements by time, or by time or count.
  public struct CollectByTime<Upstream: Publisher, Context: Scheduler>: Publisher {
    /// CollectByTime publishes arrays of the upstream's elements.
    public typealias Output = [Upstream.Output]
    /// CollectByTime fails (dropping what it holds) when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// How groups are cut.
    public let strategy: TimeGroupingStrategy<Context>
    /// Options for the scheduler's timer.
    public let options: Context.SchedulerOptions?

    /// Creates a publisher that groups `upstream`'s elements as `strategy` says.
    public init(
      upstream: Upstream, strategy: TimeGroupingStrategy<Context>,
      options: Context.SchedulerOptions?
    ) {
      self.upstream = upstream
      self.strategy = strategy
      self.options = options
    }

    /// Attaches the subscriber through a subscription that groups elements on a timer.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(CollectByTimeInner(subscriber, strategy: strategy, options: options))
    }
  }
}

private final class CollectByTimeInner<Element, Downstream: Subscriber, Context: Scheduler>:
  Subscriber, Subscription, ScheduledTarget
where Downstream.Input == [Element] {
  typealias Input = Element
  typealias Failure = Downstream.Failure

  private struct State {
    var buffer: [Element] = []
    /// Groups cut while the subscriber had no demand, oldest first.
    var ready: [[Element]] = []
    var demand = Subscribers.Demand.none
    var timer: (any Cancellable)?
    /// Upstream finished: finish once `ready` is drained.
    var isFinishing = false
    var isTerminal = false
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let state = Lock(unchecked: State())
  private let scheduler: Context
  private let stride: Context.SchedulerTimeType.Stride
  private let count: Int
  private let options: Context.SchedulerOptions?

  init(
    _ downstream: Downstream, strategy: Publishers.TimeGroupingStrategy<Context>,
    options: Context.SchedulerOptions?
  ) {
    self.downstream = SerializedDownstream(downstream)
    switch strategy {
    case .byTime(let scheduler, let stride):
      (self.scheduler, self.stride, count) = (scheduler, stride, .max)
    case .byTimeOrCount(let scheduler, let stride, let count):
      (self.scheduler, self.stride, self.count) = (scheduler, stride, Swift.max(1, count))
    }
    self.options = options
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    let target = WeakTarget<Void>(self)
    let timer = scheduler.schedule(
      after: scheduler.now.advanced(by: stride), interval: stride,
      tolerance: scheduler.minimumTolerance, options: options
    ) { target.receiveScheduled(()) }
    let live = state.withLockUnchecked { state -> Bool in
      guard !state.isTerminal else { return false }
      state.timer = timer
      return true
    }
    if !live { timer.cancel() }
    addDemand(downstream.send(.subscription(self)))
    subscription.request(.unlimited)
  }

  func receive(_ input: Element) -> Subscribers.Demand {
    flush { state in
      state.buffer.append(input)
      return state.buffer.count >= count
    }
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    switch completion {
    case .finished:
      flush { state in
        state.isFinishing = true
        return true
      }
    case .failure:
      let (deliver, timer) = state.withLockUnchecked { state -> (Bool, (any Cancellable)?) in
        guard !state.isTerminal else { return (false, nil) }
        state.isTerminal = true
        state.buffer = []
        state.ready = []
        defer { state.timer = nil }
        return (downstream.enqueue(.completion(completion)), state.timer)
      }
      timer?.cancel()
      if deliver { _ = downstream.deliver() }
    }
  }

  /// The timer ticked: cut a group.
  func receiveScheduled(_: Void) {
    flush { _ in true }
  }

  func request(_ demand: Subscribers.Demand) {
    addDemand(demand)
  }

  func cancel() {
    let timer = state.withLockUnchecked { state -> (any Cancellable)? in
      state.isTerminal = true
      state.buffer = []
      state.ready = []
      defer { state.timer = nil }
      return state.timer
    }
    timer?.cancel()
    downstream.cancel()
    upstream.cancel()
  }

  private func addDemand(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    flush { state in
      state.demand += demand
      return false
    }
  }

  /// Applies `change` (which says whether to cut the buffer into a group), then publishes the
  /// groups the subscriber has demand for, and the completion once finishing and drained.
  /// Events are queued under the lock, so they reach the subscriber in decision order.
  private func flush(_ change: (inout State) -> Bool) {
    var timer: (any Cancellable)?
    let deliver = state.withLockUnchecked { state -> Bool in
      guard !state.isTerminal else { return false }
      if change(&state), !state.buffer.isEmpty {
        state.ready.append(state.buffer)
        state.buffer = []
      }
      var deliver = false
      while state.demand > .none, !state.ready.isEmpty {
        state.demand -= 1
        deliver = downstream.enqueue(.value(state.ready.removeFirst())) || deliver
      }
      if state.isFinishing, state.ready.isEmpty {
        state.isTerminal = true
        timer = state.timer
        state.timer = nil
        deliver = downstream.enqueue(.completion(.finished)) || deliver
      }
      return deliver
    }
    timer?.cancel()
    if deliver { addDemand(downstream.deliver()) }
  }
}
