extension Publisher {
  /// Calls a closure with each received element and publishes any returned non-`nil` value.
  ///
  /// Like `filter`, a dropped element is replaced by asking upstream for one more.
  @inlinable public func compactMap<T>(
    _ transform: @escaping @Sendable (Output) -> T?
  )
    -> Publishers.CompactMap<Self, T>
  {
    Publishers.CompactMap(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that republishes the non-`nil` results of a transforming closure.
  public struct CompactMap<Upstream: Publisher, Output>: Publisher {
    /// CompactMap fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that transforms elements, returning `nil` to drop one.
    public let transform: @Sendable (Upstream.Output) -> Output?

    /// Creates a publisher that republishes the non-`nil` results of `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) -> Output?
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a stateless transforming stage.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ElementStage(downstream: subscriber, next: transform))
    }
  }
}
