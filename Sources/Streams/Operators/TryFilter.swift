extension Publisher {
  /// Republishes the elements that match a predicate that may throw; a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryFilter(
    _ isIncluded: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryFilter<Self> {
    Publishers.TryFilter(upstream: self, isIncluded: isIncluded)
  }
}

extension Publishers {
  /// A publisher that republishes the elements that match a predicate that may throw.
  public struct TryFilter<Upstream: Publisher>: Publisher {
    /// TryFilter publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// TryFilter fails with the upstream's error or the error the predicate threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that decides whether to republish an element; throwing ends the stream.
    public let isIncluded: @Sendable (Upstream.Output) throws -> Bool

    /// Creates a publisher that republishes `upstream`'s elements that match `isIncluded`.
    @inlinable public init(
      upstream: Upstream, isIncluded: @escaping @Sendable (Upstream.Output) throws -> Bool
    ) {
      self.upstream = upstream
      self.isIncluded = isIncluded
    }

    /// Attaches the subscriber behind a filtering stage that can end the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let isIncluded = isIncluded
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(downstream: subscriber) {
          try isIncluded($0) ? $0 : nil
        })
    }
  }
}
