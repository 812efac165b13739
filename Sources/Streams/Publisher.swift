/// A type that can deliver a sequence of values over time to subscribers.
///
/// A publisher delivers elements to one or more ``Subscriber`` instances. The subscriber's
/// `Input` and `Failure` types must match the publisher's `Output` and `Failure` types.
/// Every publisher in Streams keeps the same rules: a subscriber receives its subscription
/// exactly once and before anything else, never more values than it demanded, nothing after
/// a completion, and nothing after `cancel()` returns.
public protocol Publisher<Output, Failure> {
  /// The kind of values published by this publisher.
  associatedtype Output
  /// The kind of errors this publisher might publish. Use `Never` if it cannot fail.
  associatedtype Failure: Error

  /// Attaches the specified subscriber to this publisher.
  ///
  /// Implementations must call `subscriber.receive(subscription:)` exactly once.
  /// Users call `subscribe(_:)` instead.
  func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure
}

extension Publisher {
  /// Attaches the specified subscriber to this publisher.
  @inlinable @inline(__always) public func subscribe<S: Subscriber>(_ subscriber: S)
  where S.Input == Output, S.Failure == Failure {
    receive(subscriber: subscriber)
  }
}

/// A namespace for types that serve as publishers.
public enum Publishers {}
