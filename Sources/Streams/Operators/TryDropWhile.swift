extension Publisher {
  /// Like `drop(while:)`, with a predicate that may throw: a thrown error fails the stream
  /// and cancels upstream.
  @inlinable public func tryDrop(
    while predicate: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryDropWhile<Self> {
    Publishers.TryDropWhile(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that omits elements until a predicate that may throw returns `false`.
  public struct TryDropWhile<Upstream: Publisher>: Publisher {
    /// TryDropWhile publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// TryDropWhile fails with the upstream's error or the error the predicate threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that decides whether to keep dropping; throwing ends the stream.
    public let predicate: @Sendable (Upstream.Output) throws -> Bool

    /// Creates a publisher that drops `upstream`'s leading elements matching `predicate`.
    @inlinable public init(
      upstream: Upstream, predicate: @escaping @Sendable (Upstream.Output) throws -> Bool
    ) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that skips the leading matches.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let predicate = predicate
      var latch = PredicateLatch()
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(downstream: subscriber) {
          try latch.holds(for: $0, predicate) ? nil : $0
        })
    }
  }
}
