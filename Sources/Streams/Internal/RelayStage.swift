/// The subscriber in front of a ``DemandRelay``: it hands each upstream's subscription and
/// values to the relay, and lets its operator decide what the upstream's completion means —
/// finish the downstream, replace the failure with a value (`replaceError`), or detach and
/// subscribe the next upstream through a new stage (`catch`, `prepend`/`append`, `retry`).
///
/// `onCompletion` runs once, in `receive(completion:)`, which the upstream serialises.
@usableFromInline
final class RelayStage<Failure: Error, Downstream: Subscriber>: Subscriber {
  @usableFromInline typealias Input = Downstream.Input

  @usableFromInline let relay: DemandRelay<Downstream>
  @usableFromInline let onCompletion:
    (Subscribers.Completion<Failure>, DemandRelay<Downstream>) -> Void

  @inlinable init(
    relay: DemandRelay<Downstream>,
    onCompletion: @escaping (Subscribers.Completion<Failure>, DemandRelay<Downstream>) -> Void
  ) {
    self.relay = relay
    self.onCompletion = onCompletion
  }

  @inlinable func receive(subscription: any Subscription) { relay.attach(subscription) }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    onCompletion(completion, relay)
  }
}

extension RelayStage where Failure == Downstream.Failure {
  /// A stage for the last upstream: its completion finishes the downstream.
  @inlinable convenience init(relay: DemandRelay<Downstream>) {
    self.init(relay: relay) { completion, relay in relay.finish(completion) }
  }
}

extension RelayStage {
  /// A stage whose upstream's failure `recover` handles (`catch`, `replaceError`); an upstream
  /// that finishes finishes the downstream.
  @inlinable convenience init(
    relay: DemandRelay<Downstream>,
    recover: @escaping (Failure, DemandRelay<Downstream>) -> Void
  ) {
    self.init(relay: relay) { completion, relay in
      switch completion {
      case .finished: relay.finish(.finished)
      case .failure(let error): recover(error, relay)
      }
    }
  }
}

extension DemandRelay {
  /// Goes on with the publisher `next` makes once the current upstream has completed
  /// (`catch`, `prepend`/`append`): detaches that upstream, then subscribes to `next()`
  /// through a stage for the last upstream, asking it for the demand still outstanding. Does
  /// nothing, and makes no publisher, if the downstream cancelled meanwhile.
  @inlinable func continueWith<P: Publisher>(_ next: () -> P)
  where P.Output == Downstream.Input, P.Failure == Downstream.Failure {
    guard detach() else { return }
    next().subscribe(RelayStage(relay: self))
  }
}
