extension Publisher {
  /// Republishes the non-`nil` results of a transform that may throw; a thrown error fails
  /// the stream and cancels upstream.
  @inlinable public func tryCompactMap<T>(
    _ transform: @escaping @Sendable (Output) throws -> T?
  ) -> Publishers.TryCompactMap<Self, T> {
    Publishers.TryCompactMap(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that republishes the non-`nil` results of a closure that may throw.
  public struct TryCompactMap<Upstream: Publisher, Output>: Publisher {
    /// TryCompactMap fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that transforms elements; `nil` drops one, throwing ends the stream.
    public let transform: @Sendable (Upstream.Output) throws -> Output?

    /// Creates a publisher that republishes the non-`nil` results of `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) throws -> Output?
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a transforming stage that can end the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(
          downstream: subscriber, transform: transform))
    }
  }
}
