extension Publisher {
  /// Transforms elements by giving a closure the last result and the next element, and
  /// publishes each result.
  ///
  /// ```swift
  /// let runningTotal = amounts.scan(0, +)
  /// ```
  @inlinable public func scan<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) -> T
  ) -> Publishers.Scan<Self, T> {
    Publishers.Scan(
      upstream: self, initialResult: initialResult, nextPartialResult: nextPartialResult)
  }
}

extension Publishers {
  /// A publisher that accumulates elements with a closure and publishes every partial result.
  public struct Scan<Upstream: Publisher, Output>: Publisher {
    /// Scan fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The result the first element is combined with; each subscription starts from it.
    public let initialResult: Output
    /// Combines the last result with the next element.
    public let nextPartialResult: @Sendable (Output, Upstream.Output) -> Output

    /// Creates a publisher that accumulates `upstream`'s elements from `initialResult`.
    @inlinable public init(
      upstream: Upstream, initialResult: Output,
      nextPartialResult: @escaping @Sendable (Output, Upstream.Output) -> Output
    ) {
      self.upstream = upstream
      self.initialResult = initialResult
      self.nextPartialResult = nextPartialResult
    }

    /// Attaches the subscriber behind a stage that keeps the running result.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ElementStage(
          downstream: subscriber, step: ElementStepScan(from: initialResult, nextPartialResult)))
    }
  }
}
