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
    @inlinable public init(prefix: Prefix, suffix: Suffix) {
      self.prefix = prefix
      self.suffix = suffix
    }

    /// Attaches the subscriber to the prefix, then to the suffix.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      prefix.subscribe(ConcatenateInner(relay: DemandRelay(downstream: subscriber), suffix: suffix))
    }
  }
}

@usableFromInline
final class ConcatenateInner<Suffix: Publisher, Downstream: Subscriber>: Subscriber
where Downstream.Input == Suffix.Output, Downstream.Failure == Suffix.Failure {
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline let relay: DemandRelay<Downstream>
  @usableFromInline let suffix: Suffix

  @inlinable init(relay: DemandRelay<Downstream>, suffix: Suffix) {
    self.relay = relay
    self.suffix = suffix
  }

  @inlinable func receive(subscription: any Subscription) { relay.attach(subscription) }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand { relay.forward(input) }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    switch completion {
    case .finished:
      guard relay.detach() else { return }
      suffix.subscribe(RelayStage(relay: relay))
    case .failure:
      relay.finish(completion)
    }
  }
}
