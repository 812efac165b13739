/// The stage behind `tryMap`, `tryFilter`, `tryCompactMap`, `tryScan` and `tryDrop(while:)`:
/// it turns each element into zero or one element with a closure that may throw; a throw
/// fails the stream and cancels upstream.
///
/// It is the downstream's subscription (through `link`, a Mutex) so that a throw can cancel
/// upstream. `transform` (which may keep state, as `tryScan`'s does) and `isDone` are only
/// used in `receive` calls, which the upstream serialises.
@usableFromInline
final class TryStage<Input, Failure: Error, Downstream: Subscriber>: Subscriber,
  Subscription, @unchecked Sendable
where Downstream.Failure == any Error {
  // @unchecked: `link` is a Mutex; `isDone` and `transform` are used only in the serialised
  // `receive` calls.
  @usableFromInline let downstream: Downstream
  /// Returns the element to publish, or `nil` to drop this one.
  @usableFromInline let transform: (Input) throws -> Downstream.Input?
  @usableFromInline let link = UpstreamLink()
  @usableFromInline var isDone = false

  @inlinable init(
    downstream: Downstream, transform: @escaping (Input) throws -> Downstream.Input?
  ) {
    self.downstream = downstream
    self.transform = transform
  }

  @inlinable func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    downstream.receive(subscription: self)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard !isDone else { return .none }
    do {
      guard let output = try transform(input) else { return .max(1) }
      return downstream.receive(output)
    } catch {
      isDone = true
      link.cancel()
      downstream.receive(completion: .failure(error))
      return .none
    }
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    guard !isDone, link.finish() else { return }
    isDone = true
    switch completion {
    case .finished: downstream.receive(completion: .finished)
    case .failure(let error): downstream.receive(completion: .failure(error))
    }
  }

  @inlinable func request(_ demand: Subscribers.Demand) { link.request(demand) }

  @inlinable func cancel() { link.cancel() }
}
