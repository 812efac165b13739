/// The stage behind `map`, `compactMap`, `filter`, `removeDuplicates`, `dropFirst`, `scan`,
/// `mapError` and `setFailureType`: the operators that turn each element into zero or one
/// element and can neither fail nor end the stream themselves. (``TryStage`` is its
/// counterpart for closures that may throw; ``FinishingStage`` for operators that end the
/// stream early.)
///
/// It takes no lock and allocates nothing per value: it hands the upstream subscription
/// straight to the downstream subscriber, and a dropped element is replaced by asking upstream
/// for one more, so demand stays exact. `step` (which may keep state, as `scan`'s and
/// `dropFirst`'s do) is only used in `receive(_:)` calls, which the upstream serialises.
@usableFromInline
final class ElementStage<Input, Failure: Error, Downstream: Subscriber>: Subscriber {
  @usableFromInline let downstream: Downstream
  /// Returns the element to publish, or `nil` to drop this one.
  @usableFromInline let step: (Input) -> Downstream.Input?
  /// Converts the upstream's failure into the downstream's (`mapError`).
  @usableFromInline let convert: (Failure) -> Downstream.Failure

  @inlinable init(
    downstream: Downstream, convert: @escaping (Failure) -> Downstream.Failure,
    step: @escaping (Input) -> Downstream.Input?
  ) {
    self.downstream = downstream
    self.convert = convert
    self.step = step
  }

  @inlinable func receive(subscription: any Subscription) {
    downstream.receive(subscription: subscription)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard let output = step(input) else { return .max(1) }
    return downstream.receive(output)
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    switch completion {
    case .finished: downstream.receive(completion: .finished)
    case .failure(let error): downstream.receive(completion: .failure(convert(error)))
    }
  }
}

extension ElementStage where Failure == Downstream.Failure {
  /// A stage that passes the upstream's failure through unchanged.
  @inlinable convenience init(
    downstream: Downstream, step: @escaping (Input) -> Downstream.Input?
  ) {
    self.init(downstream: downstream, convert: { $0 }, step: step)
  }
}
