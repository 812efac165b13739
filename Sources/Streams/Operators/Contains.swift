extension Publisher where Output: Equatable {
  /// Publishes `true` and finishes (cancelling upstream) as soon as an element equals
  /// `output`, or `false` when the upstream finishes without one.
  @inlinable public func contains(_ output: Output) -> Publishers.Reduce<Self, Bool> {
    Publishers.Reduce(upstream: self, initial: false) {
      ReduceStep.search(&$0, $1, until: true) { $0 == output }
    }
  }
}

extension Publisher {
  /// Publishes `true` and finishes (cancelling upstream) as soon as an element satisfies the
  /// predicate, or `false` when the upstream finishes without one.
  @inlinable public func contains(
    where predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.Reduce<Self, Bool> {
    Publishers.Reduce(upstream: self, initial: false) {
      ReduceStep.search(&$0, $1, until: true, predicate)
    }
  }

  /// Like `contains(where:)`, with a predicate that may throw: a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryContains(
    where predicate: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryReduce<Self, Bool> {
    Publishers.TryReduce(upstream: self, initial: false) {
      try ReduceStep.search(&$0, $1, until: true, predicate)
    }
  }
}
