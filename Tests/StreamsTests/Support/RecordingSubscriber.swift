import Streams
import Synchronization

/// One thing a subscriber was told, in the order it was told.
enum StreamEvent<Input: Sendable, Failure: Error>: Sendable {
  case subscription
  case value(Input)
  case completion(Subscribers.Completion<Failure>)
}

extension StreamEvent: Equatable where Input: Equatable, Failure: Equatable {}

/// A subscriber that records every event and whose demand the test controls.
///
/// It asks for `initialDemand` when subscribed and returns `demandPerValue` from each
/// `receive(_:)`; `request(_:)` asks for more later. `cancel()` cancels the subscription and,
/// like `Sink`, it releases the subscription on completion or cancel, so weak references
/// tell whether the publisher let go of its inner objects. Safe to use from any thread.
final class RecordingSubscriber<Input: Sendable, Failure: Error>: Subscriber, Cancellable {
  private struct State {
    var events: [StreamEvent<Input, Failure>] = []
    var subscription: (any Subscription)?
    var cancelled = false
  }

  private let state = Mutex(State())
  private let initialDemand: Subscribers.Demand
  private let demandPerValue: Subscribers.Demand
  private let onValue: (@Sendable (RecordingSubscriber, Input) -> Void)?
  private let weakSubscription = Mutex<WeakBox?>(nil)

  /// - Parameters:
  ///   - initialDemand: requested in `receive(subscription:)`.
  ///   - demandPerValue: returned from every `receive(_:)`.
  ///   - onValue: runs after each value is recorded (to cancel or send re-entrantly).
  init(
    initialDemand: Subscribers.Demand = .unlimited, demandPerValue: Subscribers.Demand = .none,
    onValue: (@Sendable (RecordingSubscriber, Input) -> Void)? = nil
  ) {
    self.initialDemand = initialDemand
    self.demandPerValue = demandPerValue
    self.onValue = onValue
  }

  func receive(subscription: any Subscription) {
    let keep = state.withLock { state in
      state.events.append(.subscription)
      guard state.subscription == nil, !state.cancelled else { return false }
      state.subscription = subscription
      return true
    }
    weakSubscription.withLock { box in
      if box == nil { box = WeakBox(subscription as AnyObject) }
    }
    if keep {
      if initialDemand > 0 { subscription.request(initialDemand) }
    } else {
      subscription.cancel()
    }
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    state.withLock { $0.events.append(.value(input)) }
    onValue?(self, input)
    return demandPerValue
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    let subscription = state.withLock { state in
      state.events.append(.completion(completion))
      defer { state.subscription = nil }
      return state.subscription
    }
    _ = subscription
  }

  /// Asks the publisher for more values.
  func request(_ demand: Subscribers.Demand) {
    state.withLock { $0.subscription }?.request(demand)
  }

  /// Cancels the subscription and releases it; safe from any thread, any number of times.
  func cancel() {
    let subscription = state.withLock { state in
      state.cancelled = true
      defer { state.subscription = nil }
      return state.subscription
    }
    subscription?.cancel()
  }

  var events: [StreamEvent<Input, Failure>] { state.withLock { $0.events } }

  var values: [Input] {
    events.compactMap { event in
      if case .value(let value) = event { return value }
      return nil
    }
  }

  var completions: [Subscribers.Completion<Failure>] {
    events.compactMap { event in
      if case .completion(let completion) = event { return completion }
      return nil
    }
  }

  var subscriptionCount: Int {
    events.filter { if case .subscription = $0 { true } else { false } }.count
  }

  /// The first subscription received, weakly: `nil` once the publisher released it.
  var subscriptionObject: AnyObject? { weakSubscription.withLock { $0?.object } }
}

/// A weak reference that can sit in a `Mutex`.
final class WeakBox: @unchecked Sendable {
  // @unchecked: written once in init, then only read (`weak` loads are atomic).
  weak var object: AnyObject?
  init(_ object: AnyObject) { self.object = object }
}
