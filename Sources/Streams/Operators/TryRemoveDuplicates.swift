extension Publisher {
  /// Like `removeDuplicates(by:)`, with a comparison that may throw: a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryRemoveDuplicates(
    by predicate: @escaping @Sendable (Output, Output) throws -> Bool
  ) -> Publishers.TryRemoveDuplicates<Self> {
    Publishers.TryRemoveDuplicates(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that republishes an element only if it differs from the previous one, by a
  /// comparison that may throw.
  public struct TryRemoveDuplicates<Upstream: Publisher>: Publisher {
    /// TryRemoveDuplicates publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// TryRemoveDuplicates fails with the upstream's error or the error the comparison threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// Returns `true` if its two arguments are duplicates; throwing ends the stream.
    public let predicate: @Sendable (Upstream.Output, Upstream.Output) throws -> Bool

    /// Creates a publisher that drops `upstream`'s elements equal, by `predicate`, to the
    /// previous one.
    @inlinable public init(
      upstream: Upstream,
      predicate: @escaping @Sendable (Upstream.Output, Upstream.Output) throws -> Bool
    ) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that remembers the previous element.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let predicate = predicate
      var previous: Output?
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(downstream: subscriber) { input in
          if let previous, try predicate(previous, input) { return nil }
          previous = input
          return input
        })
    }
  }
}
