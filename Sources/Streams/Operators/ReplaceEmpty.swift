extension Publisher {
  /// Publishes the given element if the upstream finishes without publishing any.
  ///
  /// The replacement counts against demand: it is delivered as soon as the subscriber has
  /// asked for a value. A failure is forwarded unchanged.
  ///
  /// ```swift
  /// let results = search(query).replaceEmpty(with: [])
  /// ```
  @inlinable public func replaceEmpty(with output: Output) -> Publishers.ReplaceEmpty<Self> {
    Publishers.ReplaceEmpty(upstream: self, output: output)
  }
}

extension Publishers {
  /// A publisher that replaces an empty stream with the provided element.
  public struct ReplaceEmpty<Upstream: Publisher>: Publisher {
    /// ReplaceEmpty publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// ReplaceEmpty fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The element published if the upstream finishes empty.
    public let output: Upstream.Output

    /// Creates a publisher that republishes `upstream`, or `output` if it finishes empty.
    @inlinable public init(upstream: Upstream, output: Output) {
      self.upstream = upstream
      self.output = output
    }

    /// Attaches the subscriber behind a stage that counts demand for the replacement.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ReplaceEmptyInner(relay: DemandRelay(downstream: subscriber), output: output))
    }
  }
}

@usableFromInline
final class ReplaceEmptyInner<Downstream: Subscriber>: Subscriber {
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline let relay: DemandRelay<Downstream>
  @usableFromInline let output: Input
  /// Touched only in `receive` calls, which the upstream serialises.
  @usableFromInline var isEmpty = true

  @inlinable init(relay: DemandRelay<Downstream>, output: Input) {
    self.relay = relay
    self.output = output
  }

  @inlinable func receive(subscription: any Subscription) { relay.attach(subscription) }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    isEmpty = false
    return relay.forward(input)
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    if case .finished = completion, isEmpty {
      relay.finish(with: output)
    } else {
      relay.finish(completion)
    }
  }
}
