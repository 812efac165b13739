/// The subscription of operators whose downstream outlives one upstream (`catch`,
/// `prepend`/`append`, `replaceError`): it counts the downstream's outstanding demand so a
/// second upstream can be asked for exactly what the first one still owed.
///
/// The upstream stages call `attach`, `forward`, `detach` and `finish` from their `receive`
/// methods (serialised by their upstream, and one stage at a time); `request` and `cancel`
/// may come from any thread.
///
/// The bookkeeping `request` and `cancel` touch is not generic (`control`): they are called
/// through `any Subscription`, where the compiler cannot specialise them, and generic state
/// would cost a metadata lookup per call. The downstream is a constant; it stays alive while
/// it holds this subscription, and nothing reaches it once `control` says the relay is over.
@usableFromInline
final class DemandRelay<Downstream: Subscriber>: Subscription, @unchecked Sendable {
  // @unchecked: `control` and `finalValue` are `Locked` Mutexes; `downstream` is immutable
  // and only called from the serialised `receive` paths or after winning `control`.
  @usableFromInline
  struct Control: Sendable {
    @usableFromInline var demand: Subscribers.Demand = .none
    @usableFromInline var upstream: (any Subscription)?
    @usableFromInline var isLive = true
    @usableFromInline var hasSubscribedDownstream = false
    /// A last value is waiting for demand (`replaceError`).
    @usableFromInline var hasFinalValue = false

    @inlinable init() {}
  }

  @usableFromInline let downstream: Downstream
  @usableFromInline let control = Locked(Control())
  /// The value `finish(with:)` keeps until the downstream asks for it.
  @usableFromInline let finalValue: Locked<Downstream.Input?>

  @inlinable init(downstream: Downstream) {
    self.downstream = downstream
    finalValue = Locked(nil)
  }

  /// Takes a new upstream subscription: the first is announced downstream, a later one is
  /// asked for the demand still outstanding.
  @inlinable func attach(_ subscription: any Subscription) {
    let (announce, owed, isLive): (Bool, Subscribers.Demand, Bool) = control.withLock {
      control in
      guard control.isLive else { return (false, .none, false) }
      control.upstream = subscription
      if control.hasSubscribedDownstream { return (false, control.demand, true) }
      control.hasSubscribedDownstream = true
      return (true, .none, true)
    }
    guard isLive else {
      subscription.cancel()
      return
    }
    if announce { downstream.receive(subscription: self) }
    if owed > 0 { subscription.request(owed) }
  }

  /// Delivers a value within the downstream's demand and returns the demand it adds.
  @inlinable func forward(_ value: Downstream.Input) -> Subscribers.Demand {
    let allowed = control.withLock { control in
      guard control.isLive, control.demand > 0 else { return false }
      if control.demand != .unlimited { control.demand -= 1 }
      return true
    }
    guard allowed else { return .none }
    let more = downstream.receive(value)
    if more > 0 { control.withLock { $0.demand += more } }
    return more
  }

  /// The current upstream has ended; values stop until the next `attach`.
  ///
  /// - Returns: Whether the downstream is still there to serve.
  @inlinable func detach() -> Bool {
    control.withLock { control in
      control.upstream = nil
      return control.isLive
    }
  }

  /// Ends the stream with a completion, once.
  @inlinable func finish(_ completion: Subscribers.Completion<Downstream.Failure>) {
    guard end() else { return }
    downstream.receive(completion: completion)
  }

  /// Delivers `value` and finishes as soon as the downstream has demand.
  @inlinable func finish(with value: Downstream.Input) {
    // Stored first, so that a `request` that sees `hasFinalValue` always finds it.
    finalValue.withLock { $0 = value }
    let deliverNow = control.withLock { control in
      control.upstream = nil
      guard control.isLive else { return false }
      guard control.demand > 0 else {
        control.hasFinalValue = true
        return false
      }
      control.isLive = false
      return true
    }
    if deliverNow, let value = finalValue.withLock({ $0.take() }) {
      _ = downstream.receive(value)
      downstream.receive(completion: .finished)
    }
  }

  /// Marks the relay over; `true` for the caller that ended it.
  @inlinable func end() -> Bool {
    control.withLock { control in
      defer {
        control.isLive = false
        control.upstream = nil
      }
      return control.isLive
    }
  }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let (upstream, deliverFinal): ((any Subscription)?, Bool) = control.withLock { control in
      guard control.isLive else { return (nil, false) }
      control.demand += demand
      if control.hasFinalValue {
        control.isLive = false
        return (nil, true)
      }
      return (control.upstream, false)
    }
    if deliverFinal, let value = finalValue.withLock({ $0.take() }) {
      _ = downstream.receive(value)
      downstream.receive(completion: .finished)
    }
    upstream?.request(demand)
  }

  @usableFromInline func cancel() {
    let upstream = control.withLock { control in
      defer {
        control.isLive = false
        control.upstream = nil
      }
      return control.upstream
    }
    upstream?.cancel()
  }
}
