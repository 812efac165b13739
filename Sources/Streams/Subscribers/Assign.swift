import TetherSupport

extension Subscribers {
  /// A subscriber that assigns each received value to a property of an object.
  ///
  /// It requests unlimited values and writes on the thread that delivers them, as Combine's
  /// does: when the object belongs to one thread or actor, deliver there first (for example
  /// with `receive(on:)`). The object is held strongly until completion or cancel.
  public final class Assign<Root, Input>: Subscriber, Cancellable, CustomStringConvertible {
    /// Assign is used with publishers that cannot fail.
    public typealias Failure = Never

    private struct State {
      var object: Root?
      var link: SubscriptionStatus = .awaiting
    }

    /// The key path of the property to assign.
    public let keyPath: ReferenceWritableKeyPath<Root, Input>
    private let state: Lock<State>

    /// Creates a subscriber that assigns values to `object[keyPath: keyPath]`.
    public init(object: Root, keyPath: ReferenceWritableKeyPath<Root, Input>) {
      self.keyPath = keyPath
      state = Lock(unchecked: State(object: object))
    }

    /// A textual representation: `Assign`.
    public var description: String { "Assign \(Root.self)." }

    /// Keeps the subscription and requests unlimited values.
    public func receive(subscription: any Subscription) {
      let kept = state.withLockUnchecked { state in
        guard case .awaiting = state.link, state.object != nil else { return false }
        state.link = .subscribed(subscription)
        return true
      }
      if kept { subscription.request(.unlimited) } else { subscription.cancel() }
    }

    /// Assigns the value to the property.
    public func receive(_ value: Input) -> Subscribers.Demand {
      state.withLockUnchecked { $0.object }?[keyPath: keyPath] = value
      return .none
    }

    /// Releases the object and the subscription.
    public func receive(completion: Subscribers.Completion<Never>) {
      let object = state.withLockUnchecked { state in
        defer { state = State(object: nil, link: .terminal) }
        return state.object
      }
      _ = object
    }

    /// Cancels the subscription and releases the object.
    public func cancel() {
      let (object, link) = state.withLockUnchecked { state in
        defer { state = State(object: nil, link: .terminal) }
        return (state.object, state.link)
      }
      if case .subscribed(let subscription) = link { subscription.cancel() }
      _ = object
    }
  }
}

// @unchecked: `object` and the subscription live in `state`, a Mutex; the key path is
// immutable. Writing through it happens on the delivering thread, as documented above.
extension Subscribers.Assign: @unchecked Sendable {}

extension Publisher where Failure == Never {
  /// Assigns each element from the publisher to a property of an object.
  ///
  /// ```swift
  /// let cancellable = temperature.assign(to: \.reading, on: display)
  /// ```
  public func assign<Root>(
    to keyPath: ReferenceWritableKeyPath<Root, Output>, on object: Root
  ) -> AnyCancellable {
    let subscriber = Subscribers.Assign(object: object, keyPath: keyPath)
    subscribe(subscriber)
    return AnyCancellable(subscriber)
  }
}
