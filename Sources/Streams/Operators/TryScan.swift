extension Publisher {
  /// Like `scan(_:_:)`, with a closure that may throw: a thrown error fails the stream and
  /// cancels upstream.
  @inlinable public func tryScan<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) throws -> T
  ) -> Publishers.TryScan<Self, T> {
    Publishers.TryScan(upstream: self) {
      var result = initialResult
      return { input in
        result = try nextPartialResult(result, input)
        return result
      }
    }
  }
}

extension Publishers {
  /// A publisher that accumulates elements with a closure that may throw and publishes every
  /// partial result.
  public typealias TryScan<Upstream: Publisher, Output> = TryElementOperator<Upstream, Output>
}
