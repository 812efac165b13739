extension Publisher where Output: Equatable & SendableMetatype {
  /// Publishes only elements that don't match the previous element.
  @inlinable public func removeDuplicates() -> Publishers.RemoveDuplicates<Self> {
    removeDuplicates { $0 == $1 }
  }
}

extension Publisher {
  /// Publishes only elements that don't match the previous element, as judged by
  /// `predicate` (which returns `true` for duplicates).
  @inlinable public func removeDuplicates(
    by predicate: @escaping @Sendable (Output, Output) -> Bool
  ) -> Publishers.RemoveDuplicates<Self> {
    Publishers.RemoveDuplicates(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that publishes only elements that don't match the previous element.
  public struct RemoveDuplicates<Upstream: Publisher>: Publisher {
    /// RemoveDuplicates publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// RemoveDuplicates fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// Returns `true` when the second element duplicates the first.
    public let predicate: @Sendable (Output, Output) -> Bool

    /// Creates a publisher that drops consecutive duplicates as judged by `predicate`.
    @inlinable public init(
      upstream: Upstream, predicate: @escaping @Sendable (Output, Output) -> Bool
    ) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that remembers the last element.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(RemoveDuplicatesInner(downstream: subscriber, predicate: predicate))
    }
  }
}

@usableFromInline
final class RemoveDuplicatesInner<Downstream: Subscriber>: Subscriber {
  @usableFromInline typealias Input = Downstream.Input
  @usableFromInline typealias Failure = Downstream.Failure

  @usableFromInline let downstream: Downstream
  @usableFromInline let predicate: @Sendable (Input, Input) -> Bool
  /// Touched only in `receive(_:)`, whose calls the upstream serialises.
  @usableFromInline var previous: Input?

  @inlinable init(downstream: Downstream, predicate: @escaping @Sendable (Input, Input) -> Bool) {
    self.downstream = downstream
    self.predicate = predicate
  }

  @inlinable func receive(subscription: any Subscription) {
    downstream.receive(subscription: subscription)
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    if let previous, predicate(previous, input) { return .max(1) }
    previous = input
    return downstream.receive(input)
  }

  @inlinable func receive(completion: Subscribers.Completion<Failure>) {
    previous = nil
    downstream.receive(completion: completion)
  }
}
