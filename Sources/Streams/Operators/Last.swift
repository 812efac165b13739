extension Publisher {
  /// Publishes the last element of the stream when the upstream finishes.
  ///
  /// An upstream that finishes without elements makes this publisher finish without one.
  @inlinable public func last() -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) { result, input in
      result = input
      return false
    }
  }

  /// Publishes the last element that satisfies the predicate when the upstream finishes.
  @inlinable public func last(
    where predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.Reduce<Self, Output> {
    Publishers.Reduce(upstream: self, initial: nil) { result, input in
      if predicate(input) { result = input }
      return false
    }
  }

  /// Publishes the last element that satisfies a throwing predicate when the upstream
  /// finishes; a thrown error fails the stream.
  @inlinable public func tryLast(
    where predicate: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryReduce<Self, Output> {
    Publishers.TryReduce(upstream: self, initial: nil) { result, input in
      if try predicate(input) { result = input }
      return false
    }
  }
}
