/// The stage behind ``Publishers/ElementOperator`` (`map`, `compactMap`, `filter`,
/// `removeDuplicates`, `dropFirst`, `scan`, `mapError`, `setFailureType` and
/// `measureInterval`): the operators that turn each element into zero or one element and can
/// neither fail nor end the stream themselves. (``TryStage`` is its counterpart for closures
/// that may throw; ``FinishingStage`` for operators that end the stream early.)
///
/// It takes no lock and allocates nothing per value: it hands the upstream subscription
/// straight to the downstream subscriber, and a dropped element is replaced by asking upstream
/// for one more, so demand stays exact. `step` is a type parameter rather than a closure, so
/// that `map` and `filter` call their own closure directly (no wrapping closure per value) and
/// the state of `removeDuplicates`, `dropFirst` and `scan` lives in the stage (no closure
/// context or box to allocate per subscription).
@usableFromInline
final class ElementStage<Step: ElementStep, Downstream: Subscriber>: Subscriber
where Step.Output == Downstream.Input, Step.Failure == Downstream.Failure {
  @usableFromInline typealias Input = Step.Upstream.Output
  @usableFromInline typealias Failure = Step.Upstream.Failure

  @usableFromInline let downstream: Downstream
  /// Returns the element to publish, or `nil` to drop this one. Only used in `receive(_:)`,
  /// whose calls the upstream serialises, hence unchecked: a checked `var` would cost a
  /// dynamic exclusivity check on every element.
  @exclusivity(unchecked) @usableFromInline var step: Step
  /// Converts the upstream's failure into the downstream's (`mapError`).
  @usableFromInline let convert: (Failure) -> Downstream.Failure

  @inlinable init(
    downstream: Downstream, convert: @escaping (Failure) -> Downstream.Failure, step: Step
  ) {
    self.downstream = downstream
    self.convert = convert
    self.step = step
  }

  @inlinable func receive(subscription: any Subscription) {
    step.start()
    downstream.receive(subscription: subscription)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard let output = step.next(input) else { return .max(1) }
    return downstream.receive(output)
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    switch completion {
    case .finished: downstream.receive(completion: .finished)
    case .failure(let error): downstream.receive(completion: .failure(convert(error)))
    }
  }
}
