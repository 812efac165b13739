extension Publisher {
  /// Publishes whether every element satisfies the predicate: `false` (finishing and
  /// cancelling upstream) at the first element that does not, `true` when the upstream
  /// finishes.
  @inlinable public func allSatisfy(
    _ predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.Reduce<Self, Bool> {
    Publishers.Reduce(upstream: self, initial: true) {
      ReduceStep.search(&$0, $1, until: false, predicate)
    }
  }

  /// Like `allSatisfy(_:)`, with a predicate that may throw: a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryAllSatisfy(
    _ predicate: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryReduce<Self, Bool> {
    Publishers.TryReduce(upstream: self, initial: true) {
      try ReduceStep.search(&$0, $1, until: false, predicate)
    }
  }
}
