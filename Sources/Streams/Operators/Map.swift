extension Publisher {
  /// Transforms every element from the upstream publisher with the given closure.
  ///
  /// `map` is stateless: it takes no lock and allocates nothing per value, and it hands the
  /// upstream subscription straight to the downstream subscriber.
  ///
  /// ```swift
  /// let lengths = names.map { $0.count }
  /// ```
  @inlinable public func map<T>(
    _ transform: @escaping @Sendable (Output) -> T
  ) -> Publishers.Map<Self, T> {
    Publishers.Map(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that transforms all elements from the upstream publisher with a closure.
  public struct Map<Upstream: Publisher, Output>: Publisher {
    /// Map fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that transforms elements from the upstream publisher.
    public let transform: @Sendable (Upstream.Output) -> Output

    /// Creates a publisher that transforms `upstream`'s elements with `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Output) -> Output
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a stateless transforming stage.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ElementStage(downstream: subscriber, step: ElementStepMap(transform)))
    }
  }
}
