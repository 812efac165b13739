extension Publishers {
  /// A publisher that emits all of one publisher's elements before those from another.
  ///
  /// `prepend` and `append` build it. The suffix is subscribed to when the prefix finishes
  /// and is asked for the demand the subscriber still had outstanding; if the prefix fails,
  /// the stream fails and the suffix is never subscribed to.
  public struct Concatenate<Prefix: Publisher, Suffix: Publisher>: Publisher
  where Prefix.Output == Suffix.Output, Prefix.Failure == Suffix.Failure {
    /// Concatenate publishes the prefix's elements, then the suffix's.
    public typealias Output = Suffix.Output
    /// Concatenate fails when either publisher fails.
    public typealias Failure = Suffix.Failure

    /// The publisher whose elements come first.
    public let prefix: Prefix
    /// The publisher whose elements follow once the prefix finishes.
    public let suffix: Suffix

    /// Creates a publisher that republishes `prefix`, then `suffix`.
    public init(prefix: Prefix, suffix: Suffix) {
      self.prefix = prefix
      self.suffix = suffix
    }

    /// Attaches the subscriber to the prefix, then to the suffix.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      prefix.subscribe(PrefixStage(relay: DemandRelay(downstream: subscriber), suffix: suffix))
    }
  }
}

extension Publishers.Concatenate {
  private final class PrefixStage<Downstream: Subscriber>: Subscriber
  where Downstream.Input == Output, Downstream.Failure == Failure {
    typealias Input = Output

    private let relay: DemandRelay<Downstream>
    private let suffix: Suffix

    init(relay: DemandRelay<Downstream>, suffix: Suffix) {
      self.relay = relay
      self.suffix = suffix
    }

    func receive(subscription: any Subscription) { relay.attach(subscription) }

    func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

    func receive(completion: Subscribers.Completion<Failure>) {
      switch completion {
      case .finished:
        guard relay.detach() else { return }
        suffix.subscribe(RelayStage(relay: relay))
      case .failure:
        relay.finish(completion)
      }
    }
  }
}
