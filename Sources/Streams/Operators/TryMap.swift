extension Publisher {
  /// Transforms every element with a throwing closure; a thrown error fails the stream and
  /// cancels upstream.
  @inlinable public func tryMap<T>(
    _ transform: @escaping @Sendable (Output) throws -> T
  )
    -> Publishers.TryMap<Self, T>
  {
    Publishers.TryMap(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that transforms elements with a closure that may throw.
  public struct TryMap<Upstream: Publisher, Output>: Publisher {
    /// TryMap fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that transforms elements; throwing ends the stream with that error.
    public let transform: @Sendable (Upstream.Output) throws -> Output

    /// Creates a publisher that transforms `upstream`'s elements with `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) throws -> Output
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a transforming stage that can end the stream.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let transform = transform
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(downstream: subscriber) {
          try transform($0)
        })
    }
  }
}
