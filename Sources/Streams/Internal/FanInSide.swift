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
  @inlinable
  func subscriber<Input>(forSide index: Int) -> FanInSide<Input, Self> {
    FanInSide(core: self, index: index)
  }
}

/// Subscribes a ``FanInCore`` to one upstream and forwards that upstream's events, tagged with
/// the side's index; the core decides demand, so a value never adds any here.
///
/// Generic over the concrete core, so that forwarding an event needs no existential and no
/// extra allocation.
@usableFromInline
final class FanInSide<Input, Core: FanInCore>: Subscriber {
  @usableFromInline typealias Failure = Core.Failure

  @usableFromInline let core: Core
  @usableFromInline let index: Int

  @inlinable
  init(core: Core, index: Int) {
    self.core = core
    self.index = index
  }

  @inlinable
  func receive(subscription: any Subscription) {
    core.side(index, received: subscription)
  }

  @inlinable
  func receive(_ input: Input) -> Subscribers.Demand {
    core.side(index, received: input)
    return .none
  }

  @inlinable
  func receive(completion: Subscribers.Completion<Failure>) {
    core.side(index, completedWith: completion)
  }
}
