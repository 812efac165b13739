/// A publisher that never publishes any values, and optionally finishes immediately.
public struct Empty<Output, Failure: Error>: Publisher, Equatable, Sendable {
  /// Whether the publisher finishes as soon as a subscriber attaches.
  public let completeImmediately: Bool

  /// Creates an empty publisher; with `completeImmediately: false` it never completes.
  public init(completeImmediately: Bool = true) {
    self.completeImmediately = completeImmediately
  }

  /// Creates an empty publisher whose output and failure types are given explicitly.
  public init(
    completeImmediately: Bool = true, outputType: Output.Type, failureType: Failure.Type
  ) {
    self.init(completeImmediately: completeImmediately)
  }

  /// Attaches the subscriber and, if `completeImmediately`, finishes it at once.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    subscriber.receive(subscription: EmptySubscription())
    if completeImmediately { subscriber.receive(completion: .finished) }
  }
}

/// The subscription of publishers that deliver nothing on demand.
@usableFromInline
final class EmptySubscription: Subscription {
  @inlinable init() {}
  @usableFromInline func request(_ demand: Subscribers.Demand) {}
  @usableFromInline func cancel() {}
}
