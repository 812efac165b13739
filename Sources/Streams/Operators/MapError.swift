extension Publisher {
  /// Converts a failure from the upstream publisher into a new error.
  ///
  /// `mapError` is stateless: elements pass through untouched, with no lock and no
  /// allocation.
  ///
  /// ```swift
  /// let typed = fetch().mapError { FetchError.transport($0) }
  /// ```
  @inlinable public func mapError<E: Error>(
    _ transform: @escaping @Sendable (Failure) -> E
  ) -> Publishers.MapError<Self, E> {
    Publishers.MapError(upstream: self, transform: transform)
  }
}

extension Publishers {
  /// A publisher that converts any failure from the upstream publisher into a new error.
  public struct MapError<Upstream: Publisher, Failure: Error>: Publisher {
    /// MapError publishes its upstream's elements.
    public typealias Output = Upstream.Output

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that converts the upstream's failure.
    public let transform: @Sendable (Upstream.Failure) -> Failure

    /// Creates a publisher that converts `upstream`'s failure with `transform`.
    @inlinable public init(
      upstream: Upstream, transform: @escaping @Sendable (Upstream.Failure) -> Failure
    ) {
      self.upstream = upstream
      self.transform = transform
    }

    /// Attaches the subscriber behind a stage that converts the failure.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ElementStage<ElementStepFilter<Output>, Upstream.Failure, S>(
          downstream: subscriber, convert: transform, step: ElementStepFilter()))
    }
  }
}
