extension Publisher {
  /// Republishes only the elements that match the predicate.
  ///
  /// `filter` is stateless: it takes no lock and allocates nothing per value. A rejected
  /// element is replaced by asking upstream for one more, so demand stays exact.
  @inlinable public func filter(
    _ isIncluded: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.Filter<Self> {
    Publishers.Filter(upstream: self, isIncluded: isIncluded)
  }
}

extension Publishers {
  /// A publisher that republishes the elements that match a predicate.
  public struct Filter<Upstream: Publisher>: Publisher {
    /// Filter publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Filter fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that decides whether to republish an element.
    public let isIncluded: @Sendable (Upstream.Output) -> Bool

    /// Creates a publisher that republishes `upstream`'s elements that match `isIncluded`.
    @inlinable public init(
      upstream: Upstream, isIncluded: @escaping @Sendable (Upstream.Output) -> Bool
    ) {
      self.upstream = upstream
      self.isIncluded = isIncluded
    }

    /// Attaches the subscriber behind a stateless filtering stage.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ElementStage(downstream: subscriber, step: ElementStepFilter(isIncluded)))
    }
  }
}
