/// A publisher that exposes a method for outside callers to publish elements.
///
/// A subject is a bridge from imperative code into a stream: call ``send(_:)`` to publish a
/// value and ``send(completion:)`` to finish. Streams' subjects are safe to call from any
/// thread and deliver each value to every subscriber in the same order.
public protocol Subject<Output, Failure>: AnyObject, Publisher {
  /// Sends a value to the subscribers.
  func send(_ value: Output)
  /// Sends a completion signal to the subscribers; later values and completions are ignored.
  func send(completion: Subscribers.Completion<Failure>)
  /// Hands the subject an upstream subscription, from which it requests unlimited values.
  ///
  /// This is what happens when a subject subscribes to a publisher with
  /// `Publisher.subscribe(_:)` with a subject.
  func send(subscription: any Subscription)
}

extension Subject where Output == Void {
  /// Sends a void value to the subscribers.
  public func send() { send(()) }
}

extension Publisher {
  /// Attaches the subject to this publisher: the subject republishes its values and
  /// completion.
  ///
  /// - Returns: A cancellable that stops the subject's subscription to this publisher.
  public func subscribe<S: Subject>(_ subject: S) -> AnyCancellable
  where S.Output == Output, S.Failure == Failure, S: Sendable {
    let subscriber = SubjectSubscriber(subject)
    subscribe(subscriber)
    return AnyCancellable(subscriber)
  }
}

/// The subscriber that forwards a publisher's events into a subject.
private final class SubjectSubscriber<S: Subject & Sendable>: Subscriber, Cancellable {
  typealias Input = S.Output
  typealias Failure = S.Failure

  private let subject: S
  private let link = UpstreamLink()

  init(_ subject: S) { self.subject = subject }

  func receive(subscription: any Subscription) {
    guard link.attach(subscription) else { return }
    subject.send(subscription: subscription)
  }

  func receive(_ input: Input) -> Subscribers.Demand {
    subject.send(input)
    return .none
  }

  func receive(completion: Subscribers.Completion<Failure>) {
    guard link.finish() else { return }
    subject.send(completion: completion)
  }

  func cancel() { link.cancel() }
}
