/// The stage behind `map`, `compactMap`, `filter`, `removeDuplicates`, `dropFirst`, `scan`,
/// `mapError` and `setFailureType`: the operators that turn each element into zero or one
/// element and can neither fail nor end the stream themselves. (``TryStage`` is its
/// counterpart for closures that may throw; ``FinishingStage`` for operators that end the
/// stream early.)
///
/// It takes no lock and allocates nothing per value: it hands the upstream subscription
/// straight to the downstream subscriber, and a dropped element is replaced by asking upstream
/// for one more, so demand stays exact. `step` is a type parameter rather than a closure, so
/// that `map` and `filter` call their own closure directly (no wrapping closure per value) and
/// the state of `removeDuplicates`, `dropFirst` and `scan` lives in the stage (no closure
/// context or box to allocate per subscription).
@usableFromInline
final class ElementStage<Step: ElementStep, Failure: Error, Downstream: Subscriber>: Subscriber
where Step.Output == Downstream.Input {
  @usableFromInline typealias Input = Step.Input

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

extension ElementStage where Failure == Downstream.Failure {
  /// A stage that passes the upstream's failure through unchanged.
  @inlinable convenience init(downstream: Downstream, step: Step) {
    self.init(downstream: downstream, convert: { $0 }, step: step)
  }

  /// A stage whose step is the closure `next` (`compactMap`).
  @inlinable convenience init<Input>(
    downstream: Downstream, next: @escaping (Input) -> Downstream.Input?
  ) where Step == ElementStepClosure<Input, Downstream.Input> {
    self.init(downstream: downstream, step: ElementStepClosure(next))
  }
}

/// What an ``ElementStage`` does with each element.
@usableFromInline
protocol ElementStep {
  associatedtype Input
  associatedtype Output
  /// The element to publish for `input`, or `nil` to drop it.
  mutating func next(_ input: Input) -> Output?
}

/// A step that is a closure returning the element to publish, or `nil`.
@usableFromInline
struct ElementStepClosure<Input, Output>: ElementStep {
  @usableFromInline let body: (Input) -> Output?

  @inlinable init(_ body: @escaping (Input) -> Output?) { self.body = body }

  @inlinable func next(_ input: Input) -> Output? { body(input) }
}

/// The step of `map`: every element, transformed.
@usableFromInline
struct ElementStepMap<Input, Output>: ElementStep {
  @usableFromInline let transform: (Input) -> Output

  @inlinable init(_ transform: @escaping (Input) -> Output) { self.transform = transform }

  @inlinable func next(_ input: Input) -> Output? { transform(input) }
}

/// The step of `filter`, and of `mapError` and `setFailureType` (which pass every element):
/// the elements `isIncluded` accepts, unchanged.
@usableFromInline
struct ElementStepFilter<Input>: ElementStep {
  /// `nil` passes every element.
  @usableFromInline let isIncluded: ((Input) -> Bool)?

  @inlinable init(_ isIncluded: ((Input) -> Bool)? = nil) { self.isIncluded = isIncluded }

  @inlinable func next(_ input: Input) -> Input? {
    guard let isIncluded else { return input }
    return isIncluded(input) ? input : nil
  }
}

/// The step of `removeDuplicates`: the elements that `isDuplicate(previous, element)` does not
/// reject, where `previous` is the last element published.
@usableFromInline
struct ElementStepRemoveDuplicates<Input>: ElementStep {
  @usableFromInline let isDuplicate: (Input, Input) -> Bool
  @usableFromInline var previous: Input?

  @inlinable init(_ isDuplicate: @escaping (Input, Input) -> Bool) {
    self.isDuplicate = isDuplicate
  }

  @inlinable mutating func next(_ input: Input) -> Input? {
    if let previous, isDuplicate(previous, input) { return nil }
    previous = input
    return input
  }
}

/// The step of `dropFirst`: every element after the first `count`.
@usableFromInline
struct ElementStepDrop<Input>: ElementStep {
  @usableFromInline var remaining: Int

  @inlinable init(count: Int) { remaining = count }

  @inlinable mutating func next(_ input: Input) -> Input? {
    guard remaining > 0 else { return input }
    remaining -= 1
    return nil
  }
}

/// The step of `scan`: each element folded into the running result, which it publishes.
@usableFromInline
struct ElementStepScan<Input, Output>: ElementStep {
  @usableFromInline let fold: (Output, Input) -> Output
  @usableFromInline var result: Output

  @inlinable init(from result: Output, _ fold: @escaping (Output, Input) -> Output) {
    self.result = result
    self.fold = fold
  }

  @inlinable mutating func next(_ input: Input) -> Output? {
    result = fold(result, input)
    return result
  }
}
