/// The subscription behind `receive(on:)` and `delay(for:)`: it hands every value and the
/// completion to the scheduler as it arrives, at once or `delay` later, and delivers it to the
/// subscriber from there.
///
/// The subscription itself is delivered at once, on the subscribing thread, and demand goes
/// upstream unchanged. Each event keeps its place: with a serial scheduler and one `delay`,
/// the subscriber sees the events in the order and with the gaps they arrived with.
final class ScheduledRelay<Downstream: Subscriber, Context: Scheduler>: Subscriber,
  Subscription, ScheduledTarget
{
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  /// How long after its arrival an event is delivered (`nil`: at the next opportunity), and
  /// with what tolerance.
  struct Delay {
    let interval: Context.SchedulerTimeType.Stride
    let tolerance: Context.SchedulerTimeType.Stride
  }

  private let downstream: SerializedDownstream<Downstream>
  private let upstream = UpstreamLink()
  private let scheduler: Context
  private let options: Context.SchedulerOptions?
  private let delay: Delay?

  init(
    _ downstream: Downstream, scheduler: Context, options: Context.SchedulerOptions?,
    delay: Delay? = nil
  ) {
    self.downstream = SerializedDownstream(downstream)
    self.scheduler = scheduler
    self.options = options
    self.delay = delay
  }

  func receive(subscription: any Subscription) {
    guard upstream.attach(subscription) else { return }
    forward(downstream.send(.subscription(self)))
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    guard !upstream.isTerminal else { return .none }
    schedule(.value(input))
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard upstream.finish() else { return }
    schedule(.completion(completion))
  }

  func receiveScheduled(_ event: SerializedDownstream<Downstream>.Event) {
    forward(downstream.send(event))
  }

  func request(_ demand: Subscribers.Demand) {
    upstream.request(demand)
  }

  func cancel() {
    downstream.cancel()
    upstream.cancel()
  }

  private func schedule(_ event: SerializedDownstream<Downstream>.Event) {
    guard let delay else {
      scheduler.schedule(options: options, event, to: self)
      return
    }
    scheduler.schedule(
      after: scheduler.now.advanced(by: delay.interval), tolerance: delay.tolerance,
      options: options, event, to: self)
  }

  private func forward(_ demand: Subscribers.Demand) {
    if demand > .none { upstream.request(demand) }
  }
}
