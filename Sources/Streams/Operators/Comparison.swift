extension Publisher where Output: Comparable {
  /// Publishes the smallest element when the upstream finishes (the first of equal ones).
  @inlinable public func min() -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) { ReduceStep.extremum(&$0, $1, <) }
  }

  /// Publishes the largest element when the upstream finishes (the last of equal ones).
  @inlinable public func max() -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) { ReduceStep.extremum(&$0, $1) { !($0 < $1) } }
  }
}

extension Publisher {
  /// Publishes the smallest element, by the given ordering, when the upstream finishes.
  ///
  /// - Parameter areInIncreasingOrder: Returns `true` if its first argument is ordered before
  ///   its second.
  @inlinable public func min(
    by areInIncreasingOrder: @escaping @Sendable (Output, Output) -> Bool
  ) -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) {
      ReduceStep.extremum(&$0, $1, areInIncreasingOrder)
    }
  }

  /// Publishes the largest element, by the given ordering, when the upstream finishes.
  ///
  /// - Parameter areInIncreasingOrder: Returns `true` if its first argument is ordered before
  ///   its second.
  @inlinable public func max(
    by areInIncreasingOrder: @escaping @Sendable (Output, Output) -> Bool
  ) -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) {
      ReduceStep.extremum(&$0, $1) { !areInIncreasingOrder($0, $1) }
    }
  }

  /// Like `min(by:)`, with an ordering that may throw: a thrown error fails the stream.
  @inlinable public func tryMin(
    by areInIncreasingOrder: @escaping @Sendable (Output, Output) throws -> Bool
  ) -> Publishers.TryReduce<Self, Output> {
    Publishers.TryReduce(upstream: self, initial: nil) {
      try ReduceStep.extremum(&$0, $1, areInIncreasingOrder)
    }
  }

  /// Like `max(by:)`, with an ordering that may throw: a thrown error fails the stream.
  @inlinable public func tryMax(
    by areInIncreasingOrder: @escaping @Sendable (Output, Output) throws -> Bool
  ) -> Publishers.TryReduce<Self, Output> {
    Publishers.TryReduce(upstream: self, initial: nil) {
      try ReduceStep.extremum(&$0, $1) { try !areInIncreasingOrder($0, $1) }
    }
  }
}
