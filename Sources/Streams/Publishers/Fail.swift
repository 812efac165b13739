/// A publisher that immediately terminates with the specified error.
public struct Fail<Output, Failure: Error>: Publisher {
  /// The failure to send to each subscriber.
  public let error: Failure

  /// Creates a publisher that fails each subscriber with `error`.
  public init(error: Failure) { self.error = error }

  /// Creates a publisher with explicit output type that fails with `failure`.
  public init(outputType: Output.Type, failure: Failure) { self.error = failure }

  /// Attaches the subscriber and fails it at once.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    subscriber.receive(subscription: EmptySubscription())
    subscriber.receive(completion: .failure(error))
  }
}

extension Fail: Sendable {}
extension Fail: Equatable where Failure: Equatable {}
