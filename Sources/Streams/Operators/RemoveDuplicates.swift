extension Publisher where Output: Equatable & SendableMetatype {
  /// Publishes only elements that don't match the previous element.
  @inlinable public func removeDuplicates() -> Publishers.RemoveDuplicates<Self> {
    removeDuplicates { $0 == $1 }
  }
}

extension Publisher {
  /// Publishes only elements that don't match the previous element, as judged by
  /// `predicate` (which returns `true` for duplicates).
  @inlinable public func removeDuplicates(
    by predicate: @escaping @Sendable (Output, Output) -> Bool
  ) -> Publishers.RemoveDuplicates<Self> {
    Publishers.RemoveDuplicates(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that publishes only elements that don't match the previous element.
  public struct RemoveDuplicates<Upstream: Publisher>: Publisher {
    /// RemoveDuplicates publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// RemoveDuplicates fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// Returns `true` when the second element duplicates the first.
    public let predicate: @Sendable (Output, Output) -> Bool

    /// Creates a publisher that drops consecutive duplicates as judged by `predicate`.
    @inlinable public init(
      upstream: Upstream, predicate: @escaping @Sendable (Output, Output) -> Bool
    ) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that remembers the last element.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ElementStage(downstream: subscriber, step: ElementStepRemoveDuplicates(predicate)))
    }
  }
}
