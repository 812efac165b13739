/// The stage behind `prefix`, `prefix(while:)`, `first`, `first(where:)`, `drop(while:)` and
/// `output(in:)`: it forwards elements and may end
/// the stream early, cancelling upstream.
///
/// It is the downstream's subscription (through `link`, a Mutex) so that it knows when the
/// downstream cancelled, also from inside `receive`, and never finishes a cancelled stream.
/// `step` and its captured state are only used in `receive` calls, which the upstream
/// serialises.
@usableFromInline
final class FinishingStage<Downstream: Subscriber>: Subscriber, Subscription,
  @unchecked Sendable
{
  // @unchecked: `link` is a Mutex; `step` runs only in the serialised `receive(_:)`.
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline enum Step {
    /// Forward the element and keep going.
    case forward
    /// Forward the element, then finish.
    case forwardAndFinish
    /// Drop the element and ask for another.
    case skip
    /// Drop the element and finish.
    case finish
  }

  @usableFromInline let downstream: Downstream
  @usableFromInline let step: (Input) -> Step
  @usableFromInline let finishAtOnce: Bool
  @usableFromInline let link = UpstreamLink()

  /// - Parameters:
  ///   - finishAtOnce: finish as soon as subscribed (`prefix(0)`).
  ///   - step: decides what to do with each element; it may keep state.
  @inlinable init(
    downstream: Downstream, finishAtOnce: Bool = false, step: @escaping (Input) -> Step
  ) {
    self.downstream = downstream
    self.finishAtOnce = finishAtOnce
    self.step = step
  }

  @inlinable func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    if finishAtOnce {
      link.cancel()
      downstream.receive(subscription: EmptySubscription())
      downstream.receive(completion: .finished)
      return
    }
    downstream.receive(subscription: self)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard !link.isTerminal else { return .none }
    switch step(input) {
    case .forward:
      return downstream.receive(input)
    case .forwardAndFinish:
      _ = downstream.receive(input)
      // `take` fails if the downstream cancelled while receiving the element.
      if case .some(let subscription) = link.take() {
        subscription?.cancel()
        downstream.receive(completion: .finished)
      }
      return .none
    case .skip:
      return .max(1)
    case .finish:
      if case .some(let subscription) = link.take() {
        subscription?.cancel()
        downstream.receive(completion: .finished)
      }
      return .none
    }
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    guard link.finish() else { return }
    downstream.receive(completion: completion)
  }

  @inlinable func request(_ demand: Subscribers.Demand) { link.request(demand) }

  @inlinable func cancel() { link.cancel() }
}
