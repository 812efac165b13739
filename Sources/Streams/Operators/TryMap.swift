extension Publisher {
  /// Transforms every element with a throwing closure; a thrown error fails the stream and
  /// cancels upstream.
  @inlinable public func tryMap<T>(
    _ transform: @escaping @Sendable (Output) throws -> T
  )
    -> Publishers.TryMap<Self, T>
  {
    Publishers.TryMap(upstream: self) { { try transform($0) } }
  }
}

extension Publishers {
  /// A publisher that transforms elements with a closure that may throw.
  public typealias TryMap<Upstream: Publisher, Output> = TryElementOperator<Upstream, Output>
}
