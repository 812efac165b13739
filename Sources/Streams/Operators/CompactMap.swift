extension Publisher {
  /// Calls a closure with each received element and publishes any returned non-`nil` value.
  ///
  /// Like `filter`, a dropped element is replaced by asking upstream for one more.
  @inlinable public func compactMap<T>(
    _ transform: @escaping @Sendable (Output) -> T?
  )
    -> Publishers.CompactMap<Self, T>
  {
    Publishers.CompactMap(upstream: self, step: ElementStepCompactMap(transform))
  }
}

extension Publishers {
  /// A publisher that republishes the non-`nil` results of a transforming closure.
  public typealias CompactMap<Upstream: Publisher, Output> = ElementOperator<
    ElementStepCompactMap<Upstream, Output>
  >
}
