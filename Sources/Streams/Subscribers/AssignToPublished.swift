import TetherSupport

extension Publisher where Failure == Never {
  /// Republishes each element through a `@Published` property: `assign(to: &$property)`.
  ///
  /// Each value is set as if assigned to the property, so the owner's `objectWillChange` and
  /// `$property`'s subscribers see it. The subscription lives as long as the property: it is
  /// cancelled when the object that holds the property is released, so no `AnyCancellable`
  /// is returned and none needs storing.
  ///
  /// ```swift
  /// final class Clock: ObservableObject {
  ///   @Published var now = 0
  ///   init(ticks: PassthroughSubject<Int, Never>) { ticks.assign(to: &$now) }
  /// }
  /// ```
  public func assign(to published: inout Published<Output>.Publisher) {
    let subscriber = PublishedAssignment(published.storage)
    published.storage.keep(AnyCancellable(subscriber))
    subscribe(subscriber)
  }
}

/// The subscriber of `assign(to: &$property)`: it sets the property's storage, which it holds
/// weakly so that the storage (and the object holding it) can go, cancelling it.
final class PublishedAssignment<Value>: Subscriber, Cancellable, CustomStringConvertible {
  typealias Input = Value
  typealias Failure = Never

  private struct State {
    weak var storage: PublishedStorage<Value>?
    var link: SubscriptionStatus = .awaiting
  }

  private let state: Lock<State>

  init(_ storage: PublishedStorage<Value>) {
    state = Lock(unchecked: State(storage: storage))
  }

  var description: String { "Assign to @Published \(Value.self)" }

  func receive(subscription: any Subscription) {
    let kept = state.withLockUnchecked { state in
      guard case .awaiting = state.link, state.storage != nil else { return false }
      state.link = .subscribed(subscription)
      return true
    }
    if kept { subscription.request(.unlimited) } else { subscription.cancel() }
  }

  func receive(_ input: Value) -> Subscribers.Demand {
    state.withLockUnchecked { $0.storage }?.set(input)
    return .none
  }

  func receive(completion: Subscribers.Completion<Never>) {
    state.withLockUnchecked { $0 = State(storage: nil, link: .terminal) }
  }

  func cancel() {
    let link = state.withLockUnchecked { state in
      defer { state = State(storage: nil, link: .terminal) }
      return state.link
    }
    if case .subscribed(let subscription) = link { subscription.cancel() }
  }
}

// @unchecked: the storage reference and the subscription live in `state`, a `Lock`; values are
// handed to the storage, which keeps them under its own lock.
extension PublishedAssignment: @unchecked Sendable {}
