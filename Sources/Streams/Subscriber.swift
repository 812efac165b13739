/// A type that can receive values from a publisher.
///
/// Calls into one subscriber are never concurrent: a publisher serialises
/// `receive(subscription:)`, `receive(_:)` and `receive(completion:)` for each subscriber,
/// though successive calls may come from different threads.
public protocol Subscriber<Input, Failure>: CustomCombineIdentifierConvertible {
  /// The kind of values this subscriber receives.
  associatedtype Input
  /// The kind of errors this subscriber might receive. Use `Never` if it cannot fail.
  associatedtype Failure: Error

  /// Tells the subscriber that it has successfully subscribed and may request items.
  func receive(subscription: any Subscription)
  /// Tells the subscriber that the publisher has produced an element.
  ///
  /// - Returns: How many more elements the subscriber expects, added to its demand.
  func receive(_ input: Input) -> Subscribers.Demand
  /// Tells the subscriber that the publisher has completed, normally or with an error.
  func receive(completion: Subscribers.Completion<Failure>)
}

/// A namespace for types that serve as subscribers.
public enum Subscribers {}

extension Subscribers {
  /// A signal that a publisher produces no further values, normally or because of an error.
  public enum Completion<Failure: Error> {
    /// The publisher finished normally.
    case finished
    /// The publisher stopped publishing because of the given error.
    case failure(Failure)
  }
}

extension Subscribers.Completion: Sendable where Failure: Sendable {}
extension Subscribers.Completion: Equatable where Failure: Equatable {}
extension Subscribers.Completion: Hashable where Failure: Hashable {}
