extension Publisher {
  /// Replaces any error from the upstream publisher with the given element, then finishes.
  ///
  /// The replacement counts against demand: it is delivered as soon as the subscriber has
  /// asked for a value.
  public func replaceError(with output: Output) -> Publishers.ReplaceError<Self> {
    Publishers.ReplaceError(upstream: self, output: output)
  }
}

extension Publishers {
  /// A publisher that replaces any error from the upstream with an element, then finishes.
  public struct ReplaceError<Upstream: Publisher>: Publisher {
    /// ReplaceError publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// ReplaceError never fails.
    public typealias Failure = Never

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The element published in place of an error.
    public let output: Upstream.Output

    /// Creates a publisher that republishes `upstream` and replaces its error with `output`.
    public init(upstream: Upstream, output: Output) {
      self.upstream = upstream
      self.output = output
    }

    /// Attaches the subscriber behind a stage that counts demand for the replacement.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(Inner(relay: DemandRelay(downstream: subscriber), output: output))
    }
  }
}

extension Publishers.ReplaceError {
  private final class Inner<Downstream: Subscriber>: Subscriber
  where Downstream.Input == Output, Downstream.Failure == Never {
    typealias Input = Output
    typealias Failure = Upstream.Failure

    private let relay: DemandRelay<Downstream>
    private let output: Output

    init(relay: DemandRelay<Downstream>, output: Output) {
      self.relay = relay
      self.output = output
    }

    func receive(subscription: any Subscription) { relay.attach(subscription) }

    func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

    func receive(completion: Subscribers.Completion<Failure>) {
      switch completion {
      case .finished: relay.finish(.finished)
      case .failure: relay.finish(with: output)
      }
    }
  }
}
