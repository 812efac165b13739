extension Publisher {
  /// Handles an error from the upstream publisher by replacing it with another publisher.
  ///
  /// The new publisher is asked for the demand the subscriber still had outstanding.
  ///
  /// ```swift
  /// let safe = fetchUser().catch { _ in Just(User.guest) }
  /// ```
  public func `catch`<P: Publisher>(
    _ handler: @escaping @Sendable (Failure) -> P
  ) -> Publishers.Catch<Self, P> where P.Output == Output {
    Publishers.Catch(upstream: self, handler: handler)
  }
}

extension Publishers {
  /// A publisher that handles an error from the upstream by switching to another publisher.
  public struct Catch<Upstream: Publisher, NewPublisher: Publisher>: Publisher
  where Upstream.Output == NewPublisher.Output {
    /// Catch publishes the upstream's elements, then the new publisher's.
    public typealias Output = Upstream.Output
    /// Catch fails when the new publisher fails.
    public typealias Failure = NewPublisher.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// Returns the publisher that replaces the upstream after it fails.
    public let handler: @Sendable (Upstream.Failure) -> NewPublisher

    /// Creates a publisher that switches to `handler(error)` when `upstream` fails.
    public init(upstream: Upstream, handler: @escaping @Sendable (Upstream.Failure) -> NewPublisher)
    {
      self.upstream = upstream
      self.handler = handler
    }

    /// Attaches the subscriber to the upstream, and to the replacement after a failure.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(FirstStage(relay: DemandRelay(downstream: subscriber), handler: handler))
    }
  }
}

extension Publishers.Catch {
  private final class FirstStage<Downstream: Subscriber>: Subscriber
  where Downstream.Input == Output, Downstream.Failure == Failure {
    typealias Input = Output
    typealias Failure = Upstream.Failure

    private let relay: DemandRelay<Downstream>
    private let handler: @Sendable (Upstream.Failure) -> NewPublisher

    init(
      relay: DemandRelay<Downstream>,
      handler: @escaping @Sendable (Upstream.Failure) -> NewPublisher
    ) {
      self.relay = relay
      self.handler = handler
    }

    func receive(subscription: any Subscription) { relay.attach(subscription) }

    func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

    func receive(completion: Subscribers.Completion<Upstream.Failure>) {
      switch completion {
      case .finished:
        relay.finish(.finished)
      case .failure(let error):
        guard relay.detach() else { return }
        handler(error).subscribe(RelayStage(relay: relay))
      }
    }
  }
}

/// Forwards a later upstream (the publisher after `catch` or the suffix of a concatenation)
/// into the relay that serves the downstream.
final class RelayStage<Downstream: Subscriber>: Subscriber {
  typealias Input = Downstream.Input
  typealias Failure = Downstream.Failure

  private let relay: DemandRelay<Downstream>

  init(relay: DemandRelay<Downstream>) { self.relay = relay }

  func receive(subscription: any Subscription) { relay.attach(subscription) }

  func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

  func receive(completion: Subscribers.Completion<Failure>) { relay.finish(completion) }
}
