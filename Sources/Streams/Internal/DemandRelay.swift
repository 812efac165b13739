import TetherSupport

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
  // @unchecked: `control` is a `Lock` Mutex, which also guards the boxed final value it
  // holds; `downstream` is immutable and only called from the serialised `receive` paths or
  // after winning `control`.

  @usableFromInline let downstream: Downstream
  /// Not generic, so that `request`, `cancel` and `deinit` (all unspecialised) take and
  /// destroy it without a metadata lookup.
  @usableFromInline let control = Lock(unchecked: DemandRelayControl())

  @inlinable init(downstream: Downstream) {
    self.downstream = downstream
  }

  /// Takes a new upstream subscription: the first is announced downstream, a later one is
  /// asked for the demand still outstanding.
  @inlinable func attach(_ subscription: any Subscription) {
    let (announce, owed, isLive): (Bool, Subscribers.Demand, Bool) = control.withLockUnchecked {
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
    let allowed = control.withLockUnchecked { control in
      guard control.isLive, control.demand > 0 else { return false }
      if control.demand != .unlimited { control.demand -= 1 }
      return true
    }
    guard allowed else { return .none }
    let more = downstream.receive(value)
    if more > 0 { control.withLockUnchecked { $0.demand += more } }
    return more
  }

  /// The current upstream has ended; values stop until the next `attach`.
  ///
  /// - Returns: Whether the downstream is still there to serve.
  @inlinable func detach() -> Bool {
    control.withLockUnchecked { control in
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
    let deliverNow = control.withLockUnchecked { control in
      control.upstream = nil
      guard control.isLive else { return false }
      guard control.demand > 0 else {
        // Kept under the same lock as the flag, so a `request` that sees it finds it.
        control.finalValue = ValueBox(value)
        return false
      }
      control.isLive = false
      return true
    }
    guard deliverNow else { return }
    _ = downstream.receive(value)
    downstream.receive(completion: .finished)
  }

  /// Marks the relay over; `true` for the caller that ended it.
  @inlinable func end() -> Bool {
    control.withLockUnchecked { control in
      defer {
        control.isLive = false
        control.upstream = nil
      }
      return control.isLive
    }
  }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let (upstream, final): ((any Subscription)?, AnyObject?) = control.withLockUnchecked {
      control in
      guard control.isLive else { return (nil, nil) }
      control.demand += demand
      if let final = control.finalValue {
        control.isLive = false
        control.finalValue = nil
        return (nil, final)
      }
      return (control.upstream, nil)
    }
    if let final { deliverFinal(final) }
    upstream?.request(demand)
  }

  /// The rare path of `request` (a replaced error waited for demand), kept out of line: the
  /// compiler computes generic metadata at a function's entry, so inlined it would cost a
  /// lookup on every `request`.
  @usableFromInline @inline(never) func deliverFinal(_ final: AnyObject) {
    _ = downstream.receive(unsafeDowncast(final, to: ValueBox<Downstream.Input>.self).value)
    downstream.receive(completion: .finished)
  }

  @usableFromInline func cancel() {
    // The final value leaves the lock before it is released: its deinit may call out.
    let (upstream, final): ((any Subscription)?, AnyObject?) = control.withLockUnchecked {
      control in
      defer {
        control.isLive = false
        control.upstream = nil
        control.finalValue = nil
      }
      return (control.upstream, control.finalValue)
    }
    withExtendedLifetime(final) {}
    upstream?.cancel()
  }
}

/// The bookkeeping of a ``DemandRelay``, kept apart from its generic parameter.
@usableFromInline
struct DemandRelayControl {
  @usableFromInline var demand: Subscribers.Demand = .none
  @usableFromInline var upstream: (any Subscription)?
  @usableFromInline var isLive = true
  @usableFromInline var hasSubscribedDownstream = false
  /// A last value waiting for demand (`replaceError`): a ``ValueBox`` of the downstream's
  /// input, type-erased so that this state stays non-generic.
  @usableFromInline var finalValue: AnyObject?

  @inlinable init() {}
}

/// A value kept in non-generic, lock-protected state (`DemandRelay`'s final value,
/// `SubjectConduit`'s held value), so that the code that only moves or drops it stays free of
/// generic metadata lookups.
@usableFromInline
final class ValueBox<Value> {
  @usableFromInline let value: Value

  @inlinable init(_ value: Value) { self.value = value }
}
