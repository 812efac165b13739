extension Publisher {
  /// Transforms elements by giving a closure the last result and the next element, and
  /// publishes each result.
  ///
  /// ```swift
  /// let runningTotal = amounts.scan(0, +)
  /// ```
  @inlinable public func scan<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) -> T
  ) -> Publishers.Scan<Self, T> {
    Publishers.Scan(
      upstream: self, step: ElementStepScan(from: initialResult, nextPartialResult))
  }
}

extension Publishers {
  /// A publisher that accumulates elements with a closure and publishes every partial result.
  public typealias Scan<Upstream: Publisher, Output> = ElementOperator<
    ElementStepScan<Upstream, Output>
  >
}
