extension Publisher {
  /// Republishes only the elements that match the predicate.
  ///
  /// `filter` is stateless: it takes no lock and allocates nothing per value. A rejected
  /// element is replaced by asking upstream for one more, so demand stays exact.
  @inlinable public func filter(
    _ isIncluded: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.Filter<Self> {
    Publishers.Filter(upstream: self, step: ElementStepFilter(isIncluded))
  }
}

extension Publishers {
  /// A publisher that republishes the elements that match a predicate.
  public typealias Filter<Upstream: Publisher> = ElementOperator<ElementStepFilter<Upstream>>
}
