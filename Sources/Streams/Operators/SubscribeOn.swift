import TetherSupport

extension Publisher {
  /// Subscribes to the upstream publisher on the given scheduler, and sends it requests and
  /// cancellation there too.
  ///
  /// Use it to move the work of starting a publisher (opening a file, a `Deferred` that
  /// computes) off the subscribing thread. Elements still arrive on whatever thread the
  /// upstream delivers them; use `receive(on:)` to choose that. Nothing arrives after
  /// `cancel()` returns, although the upstream's own cancellation runs later, on the
  /// scheduler.
  ///
  /// ```swift
  /// loadReport().subscribe(on: DispatchQueue.global()).receive(on: mainQueue).sink { show($0) }
  /// ```
  public func subscribe<S: Scheduler>(
    on scheduler: S, options: S.SchedulerOptions? = nil
  ) -> Publishers.SubscribeOn<Self, S> {
    Publishers.SubscribeOn(
      upstream: self, scheduler: scheduler, options: options, kind: .subscribeOn)
  }
}

extension Publishers {
  /// A publisher that subscribes to, requests from and cancels its upstream on a scheduler.
  public typealias SubscribeOn<Upstream: Publisher, Context: Scheduler> = SchedulingOperator<
    Upstream, Context
  >
}

/// Subscribes `downstream` to `upstream` on `scheduler`, and sends requests and cancellation
/// there too (`subscribe(on:)`).
func subscribeOn<Upstream: Publisher, Downstream: Subscriber, Context: Scheduler>(
  _ upstream: Upstream, _ downstream: Downstream, scheduler: Context,
  options: Context.SchedulerOptions?
) where Upstream.Output == Downstream.Input, Upstream.Failure == Downstream.Failure {
  let inner = SubscribeOnInner(
    downstream: downstream, link: ScheduledLink(scheduler: scheduler, options: options))
  scheduler.schedule(options: options, (), to: PendingSubscription(upstream, inner))
}

/// The subscription to make on the scheduler, captured as an existential: a closure that
/// captured the publisher and subscriber types would capture their non-`Sendable` metatypes.
private final class PendingSubscription<Upstream: Publisher, Downstream: Subscriber>:
  ScheduledTarget
where Upstream.Output == Downstream.Input, Upstream.Failure == Downstream.Failure {
  /// Taken once, by the scheduled action.
  private let parts: Lock<(Upstream, Downstream)?>

  init(_ upstream: Upstream, _ downstream: Downstream) {
    parts = Lock(unchecked: (upstream, downstream))
  }

  func receiveScheduled(_: Void) {
    guard
      let (upstream, downstream) = parts.withLockUnchecked({ parts in
        defer { parts = nil }
        return parts
      })
    else { return }
    upstream.subscribe(downstream)
  }
}

private final class SubscribeOnInner<Downstream: Subscriber, Context: Scheduler>: Subscriber,
  Subscription, @unchecked Sendable
{
  // @unchecked: `link` is a Mutex; `downstream` is immutable and only called from the
  // upstream's `receive` calls, which the upstream serialises.
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  private let downstream: Downstream
  private let link: ScheduledLink<Context>

  init(downstream: Downstream, link: ScheduledLink<Context>) {
    self.downstream = downstream
    self.link = link
  }

  func receive(subscription: any Subscription) {
    guard link.upstream.attach(subscription) else { return }
    downstream.receive(subscription: self)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    guard !link.upstream.isTerminal else { return .none }
    return downstream.receive(input)
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard link.upstream.finish() else { return }
    downstream.receive(completion: completion)
  }

  func request(_ demand: Subscribers.Demand) { link.request(demand) }

  func cancel() { link.cancel() }
}

/// The upstream end of `subscribe(on:)`, apart from the subscriber's generic type so that
/// scheduled actions can capture it.
private final class ScheduledLink<Context: Scheduler>: Sendable {
  let upstream = UpstreamLink()
  let scheduler: Context
  let options: Context.SchedulerOptions?

  init(scheduler: Context, options: Context.SchedulerOptions?) {
    self.scheduler = scheduler
    self.options = options
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    scheduler.schedule(options: options) { self.upstream.request(demand) }
  }

  /// Stops deliveries at once; the upstream is cancelled on the scheduler.
  func cancel() {
    guard case .some(.some(let subscription)) = upstream.take() else { return }
    scheduler.schedule(options: options) { subscription.cancel() }
  }
}
