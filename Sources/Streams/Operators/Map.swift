extension Publisher {
  /// Transforms every element from the upstream publisher with the given closure.
  ///
  /// `map` is stateless: it takes no lock and allocates nothing per value, and it hands the
  /// upstream subscription straight to the downstream subscriber.
  ///
  /// ```swift
  /// let lengths = names.map { $0.count }
  /// ```
  @inlinable public func map<T>(
    _ transform: @escaping @Sendable (Output) -> T
  ) -> Publishers.Map<Self, T> {
    Publishers.Map(upstream: self, step: ElementStepMap(transform))
  }
}

extension Publishers {
  /// A publisher that transforms all elements from the upstream publisher with a closure.
  public typealias Map<Upstream: Publisher, Output> = ElementOperator<
    ElementStepMap<Upstream, Output>
  >
}
