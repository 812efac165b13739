/// The subscription of operators whose downstream outlives one upstream (`catch`,
/// `prepend`/`append`, `replaceError`): it counts the downstream's outstanding demand so a
/// second upstream can be asked for exactly what the first one still owed.
///
/// The upstream stages call `attach`, `forward`, `detach` and `finish` from their `receive`
/// methods (serialised by their upstream, and one stage at a time); `request` and `cancel`
/// may come from any thread. The downstream is released on completion and cancel.
@usableFromInline
final class DemandRelay<Downstream: Subscriber>: Subscription, @unchecked Sendable {
  // @unchecked: every stored property lives in `state`, a Mutex.
  @usableFromInline struct State {
    @usableFromInline var downstream: Downstream?
    @usableFromInline var demand: Subscribers.Demand = .none
    @usableFromInline var upstream: (any Subscription)?
    @usableFromInline var hasSubscribedDownstream = false
    /// A last value waiting for demand, after which the stream finishes (`replaceError`).
    @usableFromInline var finalValue: Downstream.Input?

    @inlinable init(downstream: Downstream? = nil) { self.downstream = downstream }
  }

  @usableFromInline let state: Locked<State>

  @inlinable init(downstream: Downstream) {
    state = Locked(State(downstream: downstream))
  }

  /// Takes a new upstream subscription: the first is announced downstream, a later one is
  /// asked for the demand still outstanding.
  @inlinable func attach(_ subscription: any Subscription) {
    let (downstream, owed, isLive): (Downstream?, Subscribers.Demand, Bool) = state.withLock {
      state in
      guard state.downstream != nil else { return (nil, .none, false) }
      state.upstream = subscription
      if state.hasSubscribedDownstream { return (nil, state.demand, true) }
      state.hasSubscribedDownstream = true
      return (state.downstream, .none, true)
    }
    guard isLive else {
      subscription.cancel()
      return
    }
    downstream?.receive(subscription: self)
    if owed > 0 { subscription.request(owed) }
  }

  /// Delivers a value within the downstream's demand and returns the demand it adds.
  @inlinable func forward(_ value: Downstream.Input) -> Subscribers.Demand {
    let downstream: Downstream? = state.withLock { state in
      guard let downstream = state.downstream, state.demand > 0 else { return nil }
      if state.demand != .unlimited { state.demand -= 1 }
      return downstream
    }
    guard let downstream else { return .none }
    let more = downstream.receive(value)
    if more > 0 { state.withLock { $0.demand += more } }
    return more
  }

  /// The current upstream has ended; values stop until the next `attach`.
  ///
  /// - Returns: Whether the downstream is still there to serve.
  @inlinable func detach() -> Bool {
    state.withLock { state in
      state.upstream = nil
      return state.downstream != nil
    }
  }

  /// Ends the stream with a completion, once.
  @inlinable func finish(_ completion: Subscribers.Completion<Downstream.Failure>) {
    let downstream = state.withLock { state in
      defer { state = State() }
      return state.downstream
    }
    downstream?.receive(completion: completion)
  }

  /// Delivers `value` and finishes as soon as the downstream has demand.
  @inlinable func finish(with value: Downstream.Input) {
    let downstream: Downstream? = state.withLock { state in
      state.upstream = nil
      guard state.demand > 0 else {
        state.finalValue = value
        return nil
      }
      defer { state = State() }
      return state.downstream
    }
    guard let downstream else { return }
    _ = downstream.receive(value)
    downstream.receive(completion: .finished)
  }

  @inlinable func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let (upstream, final): ((any Subscription)?, (Downstream, Downstream.Input)?) =
      state.withLock { state in
        guard state.downstream != nil else { return (nil, nil) }
        state.demand += demand
        if let value = state.finalValue, let downstream = state.downstream {
          state = State()
          return (nil, (downstream, value))
        }
        return (state.upstream, nil)
      }
    if let (downstream, value) = final {
      _ = downstream.receive(value)
      downstream.receive(completion: .finished)
    }
    upstream?.request(demand)
  }

  @inlinable func cancel() {
    let (upstream, downstream) = state.withLock { state in
      defer { state = State() }
      return (state.upstream, state.downstream)
    }
    upstream?.cancel()
    _ = downstream
  }
}
