extension Publisher {
  /// Omits the specified number of elements before republishing later ones.
  ///
  /// Each dropped element is replaced by asking upstream for one more, so the downstream
  /// subscriber's demand counts only the elements it receives.
  @inlinable public func dropFirst(_ count: Int = 1) -> Publishers.Drop<Self> {
    Publishers.Drop(upstream: self, step: ElementStepDrop(count: Swift.max(0, count)))
  }
}

extension Publishers {
  /// A publisher that omits a specified number of elements before republishing later ones.
  public typealias Drop<Upstream: Publisher> = ElementOperator<ElementStepDrop<Upstream>>
}
