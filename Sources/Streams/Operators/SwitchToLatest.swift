import TetherSupport

extension Publisher where Output: Publisher, Output.Failure == Failure {
  /// Republishes the values of the most recent publisher this publisher produced, cancelling
  /// the previous one.
  ///
  /// Upstream (the publisher of publishers) is asked for unlimited values. Each new inner
  /// publisher replaces the current one, which is cancelled at once, and inherits the
  /// subscriber's outstanding demand. The result finishes when the upstream and the current
  /// inner publisher have finished, and fails when either fails.
  ///
  /// ```swift
  /// queries.map { search($0) }.switchToLatest().sink { show($0) }
  /// ```
  public func switchToLatest() -> Publishers.SwitchToLatest<Output, Self> {
    Publishers.SwitchToLatest(upstream: self)
  }
}

extension Publisher where Output: Publisher, Failure == Never {
  /// Republishes the values of the most recent publisher this publisher produced, when only
  /// the inner publishers can fail; the result fails with their failure type.
  ///
  /// This publisher is retyped with `setFailureType(to:)` to the inner publishers' failure
  /// type, as Combine does. Switching, demand and completion work as in the overload whose
  /// failure types match; a failure of the current inner publisher is forwarded at once and
  /// cancels this publisher.
  ///
  /// ```swift
  /// let queries = PassthroughSubject<String, Never>()
  /// queries.map { search($0) }.switchToLatest()  // search fails with SearchError
  /// ```
  public func switchToLatest()
    -> Publishers.SwitchToLatest<
      Output, Publishers.SetFailureType<Self, Output.Failure>
    >
  {
    Publishers.SwitchToLatest(upstream: setFailureType(to: Output.Failure.self))
  }
}

extension Publisher where Output: Publisher, Failure == Never, Output.Failure == Never {
  /// Republishes the values of the most recent publisher this publisher produced, when
  /// neither this publisher nor the inner publishers can fail.
  ///
  /// This overload keeps the types unchanged and is the one chosen when both failure types
  /// are `Never`.
  public func switchToLatest() -> Publishers.SwitchToLatest<Output, Self> {
    Publishers.SwitchToLatest(upstream: self)
  }
}

extension Publisher where Output: Publisher, Output.Failure == Never {
  /// Republishes the values of the most recent publisher this publisher produced, when only
  /// this publisher can fail; the result fails with its failure type.
  ///
  /// Each inner publisher is retyped with `setFailureType(to:)` to this publisher's failure
  /// type, as Combine does. Switching, demand and completion work as in the overload whose
  /// failure types match; a failure of this publisher is forwarded at once and cancels the
  /// current inner publisher.
  ///
  /// ```swift
  /// let sources = PassthroughSubject<Just<Int>, LoadError>()
  /// sources.switchToLatest().sink(receiveCompletion: { print($0) }, receiveValue: { show($0) })
  /// ```
  public func switchToLatest()
    -> Publishers.SwitchToLatest<
      Publishers.SetFailureType<Output, Failure>,
      Publishers.Map<Self, Publishers.SetFailureType<Output, Failure>>
    >
  {
    Publishers.SwitchToLatest(
      upstream: map(sendableClosure(RetypeFailure<Output, Failure>())))
  }
}

extension Publishers {
  /// A publisher that flattens nested publishers, republishing only the latest one's values.
  public struct SwitchToLatest<P: Publisher, Upstream: Publisher>: Publisher
  where Upstream.Output == P, P.Failure == Upstream.Failure {
    /// The kind of values published: the inner publishers'.
    public typealias Output = P.Output
    /// The kind of errors published: the upstream's and inner publishers'.
    public typealias Failure = P.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream

    /// Creates a publisher that republishes the latest inner publisher of `upstream`.
    public init(upstream: Upstream) {
      self.upstream = upstream
    }

    /// Attaches the subscriber through a subscription that follows the latest inner
    /// publisher.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(SwitchToLatestInner<P, S>(subscriber))
    }
  }
}

@usableFromInline
final class SwitchToLatestInner<Inner: Publisher, Downstream: Subscriber>: Subscriber,
  Subscription
where Downstream.Input == Inner.Output, Downstream.Failure == Inner.Failure {
  @usableFromInline typealias Input = Inner
  @usableFromInline typealias Failure = Inner.Failure

  @usableFromInline struct State {
    @usableFromInline var outer: (any Subscription)?
    @usableFromInline var isOuterFinished = false
    /// The id of the latest inner publisher, and its subscription once it arrived.
    @usableFromInline var currentID = 0
    @usableFromInline var hasCurrent = false
    @usableFromInline var current: (any Subscription)?
    @usableFromInline var demand = Subscribers.Demand.none
    @usableFromInline var isTerminal = false

    @inlinable init() {}
  }

  @usableFromInline let downstream: SerializedDownstream<Downstream>
  @usableFromInline let state = Lock(unchecked: State())

  @inlinable init(_ downstream: Downstream) {
    self.downstream = SerializedDownstream(downstream)
  }

  @inlinable func receive(subscription: any Subscription) {
    let kept = state.withLockUnchecked { state in
      guard !state.isTerminal, state.outer == nil else { return false }
      state.outer = subscription
      return true
    }
    guard kept else {
      subscription.cancel()
      return
    }
    addDemand(downstream.send(.subscription(self)))
    subscription.request(.unlimited)
  }

  @inlinable func receive(_ input: Inner) -> Subscribers.Demand {
    let switched = state.withLockUnchecked { state -> (id: Int, previous: (any Subscription)?)? in
      guard !state.isTerminal else { return nil }
      state.currentID += 1
      state.hasCurrent = true
      defer { state.current = nil }
      return (state.currentID, state.current)
    }
    guard let switched else { return .none }
    switched.previous?.cancel()
    input.subscribe(SwitchToLatestChild(parent: self, id: switched.id))
    return .none
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    let (deliver, current) = state.withLockUnchecked { state -> (Bool, (any Subscription)?) in
      guard !state.isTerminal else { return (false, nil) }
      state.outer = nil
      state.isOuterFinished = true
      return completeLocked(&state, completion)
    }
    complete(deliver, cancelling: current)
  }

  @inlinable func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let current = state.withLockUnchecked { state -> (any Subscription)? in
      guard !state.isTerminal else { return nil }
      state.demand += demand
      return state.current
    }
    current?.request(demand)
  }

  @inlinable func cancel() {
    let (outer, current) = state.withLockUnchecked {
      state -> ((any Subscription)?, (any Subscription)?) in
      guard !state.isTerminal else { return (nil, nil) }
      state.isTerminal = true
      defer {
        state.outer = nil
        state.current = nil
      }
      return (state.outer, state.current)
    }
    downstream.cancel()
    outer?.cancel()
    current?.cancel()
  }

  // MARK: Inner publisher events

  @inlinable func child(_ id: Int, received subscription: any Subscription) {
    let demand = state.withLockUnchecked { state -> Subscribers.Demand? in
      guard !state.isTerminal, state.currentID == id, state.current == nil else { return nil }
      state.current = subscription
      return state.demand
    }
    subscription.requestOrCancel(demand)
  }

  @inlinable func child(_ id: Int, received input: Downstream.Input) {
    let claim = state.withLockUnchecked { state -> SerializedDownstream<Downstream>.Claim in
      guard !state.isTerminal, state.currentID == id, state.demand > .none else { return .none }
      state.demand -= 1
      return downstream.enqueue(value: input)
    }
    addDemand(downstream.complete(claim, value: input))
  }

  @inlinable func child(_ id: Int, completedWith completion: Subscribers.Completion<Failure>) {
    let (deliver, outer) = state.withLockUnchecked { state -> (Bool, (any Subscription)?) in
      guard !state.isTerminal, state.currentID == id else { return (false, nil) }
      state.current = nil
      state.hasCurrent = false
      return completeLocked(&state, completion)
    }
    complete(deliver, cancelling: outer)
  }

  @inlinable func addDemand(_ demand: Subscribers.Demand) {
    request(demand)
  }

  /// After the outer or the current publisher completed (and was let go of): a failure ends
  /// the stream at once, returning the other subscription to cancel; `.finished` ends it
  /// once neither is left. Returns whether the caller must deliver.
  @inlinable func completeLocked(
    _ state: inout State, _ completion: Subscribers.Completion<Failure>
  ) -> (Bool, (any Subscription)?) {
    guard case .failure = completion else { return (finishLocked(&state), nil) }
    state.isTerminal = true
    defer {
      state.outer = nil
      state.current = nil
    }
    return (downstream.enqueue(.completion(completion)), state.outer ?? state.current)
  }

  /// Does what ``completeLocked(_:_:)`` decided; call without holding a lock.
  @inlinable func complete(_ deliver: Bool, cancelling other: (any Subscription)?) {
    other?.cancel()
    if deliver { _ = downstream.deliver() }
  }

  @inlinable func finishLocked(_ state: inout State) -> Bool {
    guard state.isOuterFinished, !state.hasCurrent else { return false }
    state.isTerminal = true
    return downstream.enqueue(.completion(.finished))
  }
}

/// Subscribes a `SwitchToLatestInner` to one inner publisher.
@usableFromInline
final class SwitchToLatestChild<Inner: Publisher, Downstream: Subscriber>: Subscriber
where Downstream.Input == Inner.Output, Downstream.Failure == Inner.Failure {
  @usableFromInline typealias Input = Inner.Output
  @usableFromInline typealias Failure = Inner.Failure

  @usableFromInline let parent: SwitchToLatestInner<Inner, Downstream>
  @usableFromInline let id: Int

  @inlinable init(parent: SwitchToLatestInner<Inner, Downstream>, id: Int) {
    self.parent = parent
    self.id = id
  }

  @inlinable func receive(subscription: any Subscription) {
    parent.child(id, received: subscription)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    parent.child(id, received: input)
    return .none
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    parent.child(id, completedWith: completion)
  }
}
