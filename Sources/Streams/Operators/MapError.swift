extension Publisher {
  /// Converts a failure from the upstream publisher into a new error.
  ///
  /// `mapError` is stateless: elements pass through untouched, with no lock and no
  /// allocation.
  ///
  /// ```swift
  /// let typed = fetch().mapError { FetchError.transport($0) }
  /// ```
  @inlinable public func mapError<E: Error>(
    _ transform: @escaping @Sendable (Failure) -> E
  ) -> Publishers.MapError<Self, E> {
    Publishers.MapError(upstream: self, step: ElementStepPass(), convert: transform)
  }
}

extension Publishers {
  /// A publisher that converts any failure from the upstream publisher into a new error.
  public typealias MapError<Upstream: Publisher, Failure: Error> = ElementOperator<
    ElementStepPass<Upstream, Failure>
  >
}
