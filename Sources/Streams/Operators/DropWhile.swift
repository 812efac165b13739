extension Publisher {
  /// Drops elements while the predicate holds, then republishes every element from the first
  /// one that fails it.
  ///
  /// ```swift
  /// let afterWarmUp = readings.drop { $0 < threshold }
  /// ```
  @inlinable public func drop(
    while predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.DropWhile<Self> {
    Publishers.DropWhile(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that omits elements from an upstream publisher until a given closure returns
  /// `false`.
  public struct DropWhile<Upstream: Publisher>: Publisher {
    /// DropWhile publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// DropWhile fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that decides whether to keep dropping.
    public let predicate: @Sendable (Output) -> Bool

    /// Creates a publisher that drops `upstream`'s leading elements matching `predicate`.
    @inlinable public init(upstream: Upstream, predicate: @escaping @Sendable (Output) -> Bool) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that skips the leading matches.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let predicate = predicate
      var latch = PredicateLatch()
      upstream.subscribe(
        FinishingStage(downstream: subscriber) {
          latch.holds(for: $0, predicate) ? .skip : .forward
        }
      )
    }
  }
}
