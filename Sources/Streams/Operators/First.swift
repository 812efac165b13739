extension Publisher {
  /// Publishes the first element of the stream, then finishes and cancels upstream.
  @inlinable public func first() -> Publishers.First<Self> {
    Publishers.First(upstream: self)
  }

  /// Publishes the first element that satisfies the predicate, then finishes and cancels
  /// upstream.
  @inlinable public func first(
    where predicate: @escaping @Sendable (Output) -> Bool
  )
    -> Publishers.FirstWhere<Self>
  {
    Publishers.FirstWhere(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that publishes the first element of a stream, then finishes.
  public struct First<Upstream: Publisher>: Publisher {
    /// First publishes its upstream's element.
    public typealias Output = Upstream.Output
    /// First fails when its upstream fails before its first element.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream

    /// Creates a publisher that republishes the first element of `upstream`.
    @inlinable public init(upstream: Upstream) { self.upstream = upstream }

    /// Attaches the subscriber behind a stage that ends the stream after one element.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(FinishingStage(downstream: subscriber) { _ in .forwardAndFinish })
    }
  }

  /// A publisher that publishes the first element that satisfies a predicate, then finishes.
  public typealias FirstWhere<Upstream: Publisher> = PredicateGate<Upstream, FirstWhereRule>

  /// The rule of ``Publishers/FirstWhere``: the first element the predicate accepts.
  public enum FirstWhereRule: PredicateGateRule {
    /// ``Publishers/PredicateGateKind/firstWhere``.
    @inlinable public static var gate: PredicateGateKind { .firstWhere }
  }
}
