extension Publisher {
  /// Republishes elements while the predicate holds, then finishes (cancelling upstream) at
  /// the first element that fails it; that element is not published.
  ///
  /// ```swift
  /// let warmUp = readings.prefix { $0 < threshold }
  /// ```
  @inlinable public func prefix(
    while predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.PrefixWhile<Self> {
    Publishers.PrefixWhile(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that republishes elements while a predicate holds, then finishes.
  public struct PrefixWhile<Upstream: Publisher>: Publisher {
    /// PrefixWhile publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// PrefixWhile fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that decides whether to go on.
    public let predicate: @Sendable (Output) -> Bool

    /// Creates a publisher that republishes `upstream`'s leading elements matching
    /// `predicate`.
    @inlinable public init(upstream: Upstream, predicate: @escaping @Sendable (Output) -> Bool) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that ends the stream at the first mismatch.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let predicate = predicate
      upstream.subscribe(
        FinishingStage(downstream: subscriber) { predicate($0) ? .forward : .finish })
    }
  }
}
