extension Publisher {
  /// Republishes the elements that match a predicate that may throw; a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryFilter(
    _ isIncluded: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryFilter<Self> {
    Publishers.TryFilter(upstream: self) { { try isIncluded($0) ? $0 : nil } }
  }
}

extension Publishers {
  /// A publisher that republishes the elements that match a predicate that may throw.
  public typealias TryFilter<Upstream: Publisher> = TryElementOperator<Upstream, Upstream.Output>
}
