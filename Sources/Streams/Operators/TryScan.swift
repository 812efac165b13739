extension Publisher {
  /// Like `scan(_:_:)`, with a closure that may throw: a thrown error fails the stream and
  /// cancels upstream.
  @inlinable public func tryScan<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) throws -> T
  ) -> Publishers.TryScan<Self, T> {
    Publishers.TryScan(
      upstream: self, initialResult: initialResult, nextPartialResult: nextPartialResult)
  }
}

extension Publishers {
  /// A publisher that accumulates elements with a closure that may throw and publishes every
  /// partial result.
  public struct TryScan<Upstream: Publisher, Output>: Publisher {
    /// TryScan fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The result the first element is combined with; each subscription starts from it.
    public let initialResult: Output
    /// Combines the last result with the next element; throwing ends the stream.
    public let nextPartialResult: @Sendable (Output, Upstream.Output) throws -> Output

    /// Creates a publisher that accumulates `upstream`'s elements from `initialResult`.
    @inlinable public init(
      upstream: Upstream, initialResult: Output,
      nextPartialResult: @escaping @Sendable (Output, Upstream.Output) throws -> Output
    ) {
      self.upstream = upstream
      self.initialResult = initialResult
      self.nextPartialResult = nextPartialResult
    }

    /// Attaches the subscriber behind a stage that keeps the running result.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let next = nextPartialResult
      var result = initialResult
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(downstream: subscriber) { input in
          result = try next(result, input)
          return result
        })
    }
  }
}
