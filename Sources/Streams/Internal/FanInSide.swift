/// The shared state of an operator that subscribes to several upstreams at once
/// (`combineLatest`, `zip`, `merge`): each upstream reaches it through a ``FanInSide`` that
/// tags every event with the index of its side.
@usableFromInline
protocol FanInCore<Failure>: AnyObject {
  associatedtype Failure: Error

  /// The side at `index` got its upstream subscription.
  func side(_ index: Int, received subscription: any Subscription)

  /// The side at `index` got a value. Generic because one core may serve sides of different
  /// value types (`combineLatest`, `zip`).
  func side<Value>(_ index: Int, received value: Value)

  /// The side at `index` completed.
  func side(_ index: Int, completedWith completion: Subscribers.Completion<Failure>)
}

extension FanInCore {
  /// A subscriber that feeds one upstream's events to this core as side `index`.
  ///
  /// The side calls the core through closures made here, where the core's type is known:
  /// an upstream that reaches the side through the `Subscriber` protocol runs the side's
  /// unspecialised code, which then needs no generic metadata to call into the core.
  @inlinable
  func subscriber<Input>(forSide index: Int) -> FanInSide<Input, Failure> {
    // Each closure captures only the core, so the core is its context: no closure context
    // is allocated (a capture of the core and the index would allocate one per closure).
    FanInSide(
      index: index,
      subscription: { self.side($0, received: $1) },
      value: { self.side($0, received: $1) },
      completion: { self.side($0, completedWith: $1) })
  }
}

/// Subscribes a ``FanInCore`` to one upstream and forwards that upstream's events, tagged with
/// the side's index; the core decides demand, so a value never adds any here.
@usableFromInline
final class FanInSide<Input, Failure: Error>: Subscriber {
  @usableFromInline let index: Int
  @usableFromInline let onSubscription: (Int, any Subscription) -> Void
  @usableFromInline let onValue: (Int, Input) -> Void
  @usableFromInline let onCompletion: (Int, Subscribers.Completion<Failure>) -> Void

  @inlinable
  init(
    index: Int,
    subscription: @escaping (Int, any Subscription) -> Void,
    value: @escaping (Int, Input) -> Void,
    completion: @escaping (Int, Subscribers.Completion<Failure>) -> Void
  ) {
    self.index = index
    onSubscription = subscription
    onValue = value
    onCompletion = completion
  }

  @inlinable
  func receive(subscription: any Subscription) {
    onSubscription(index, subscription)
  }

  @inlinable
  func receive(_ input: Input) -> Subscribers.Demand {
    onValue(index, input)
    return .none
  }

  @inlinable
  func receive(completion: Subscribers.Completion<Failure>) {
    onCompletion(index, completion)
  }
}

extension Subscription {
  /// Starts an upstream subscription that has just arrived at an operator with several
  /// upstreams, as the operator decided under its lock: asks it for `demand`, the subscriber's
  /// demand still open, or cancels it if `nil` (the operator ended, or that upstream already
  /// had a subscription). Call without holding a lock.
  @inlinable
  func requestOrCancel(_ demand: Subscribers.Demand?) {
    guard let demand else {
      cancel()
      return
    }
    if demand > .none { request(demand) }
  }
}
