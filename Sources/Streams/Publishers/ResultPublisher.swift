extension Result {
  /// A publisher of this result: its success once then finished, or its failure at once.
  ///
  /// ```swift
  /// Result<Int, ParseError> { try parse(text) }.publisher.sink(...)
  /// ```
  public var publisher: Publisher { Publisher(self) }

  /// A publisher that publishes a result's success once and finishes, or fails with its
  /// failure: Combine's `Result.Publisher`.
  ///
  /// A success is delivered on the subscriber's first demand; a failure is sent as soon as the
  /// subscriber attaches, without waiting for demand (as `Fail` does).
  public struct Publisher: Streams.Publisher {
    /// The result's success.
    public typealias Output = Success

    /// The result to publish.
    public let result: Result<Success, Failure>

    /// Creates a publisher of `result`.
    public init(_ result: Result<Success, Failure>) { self.result = result }

    /// Creates a publisher that publishes `output` once, then finishes.
    public init(_ output: Output) { self.init(.success(output)) }

    /// Creates a publisher that fails with `failure`.
    public init(_ failure: Failure) { self.init(.failure(failure)) }

    /// Attaches the subscriber: it gets the success on its first demand, or the failure at once.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Success, S.Failure == Failure {
      switch result {
      case .success(let output):
        subscriber.receive(subscription: SingleValueSubscription(subscriber, value: output))
      case .failure(let failure):
        subscriber.receive(subscription: EmptySubscription())
        subscriber.receive(completion: .failure(failure))
      }
    }
  }
}

extension Result.Publisher: Sendable where Success: Sendable {}
extension Result.Publisher: Equatable where Success: Equatable, Failure: Equatable {}
