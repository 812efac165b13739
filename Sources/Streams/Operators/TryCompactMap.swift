extension Publisher {
  /// Republishes the non-`nil` results of a transform that may throw; a thrown error fails
  /// the stream and cancels upstream.
  @inlinable public func tryCompactMap<T>(
    _ transform: @escaping @Sendable (Output) throws -> T?
  ) -> Publishers.TryCompactMap<Self, T> {
    Publishers.TryCompactMap(upstream: self) { transform }
  }
}

extension Publishers {
  /// A publisher that republishes the non-`nil` results of a closure that may throw.
  public typealias TryCompactMap<Upstream: Publisher, Output> = TryElementOperator<
    Upstream, Output
  >
}
