extension Publisher where Output: Equatable & SendableMetatype {
  /// Publishes only elements that don't match the previous element.
  @inlinable public func removeDuplicates() -> Publishers.RemoveDuplicates<Self> {
    removeDuplicates { $0 == $1 }
  }
}

extension Publisher {
  /// Publishes only elements that don't match the previous element, as judged by
  /// `predicate` (which returns `true` for duplicates).
  @inlinable public func removeDuplicates(
    by predicate: @escaping @Sendable (Output, Output) -> Bool
  ) -> Publishers.RemoveDuplicates<Self> {
    Publishers.RemoveDuplicates(upstream: self, step: ElementStepRemoveDuplicates(predicate))
  }
}

extension Publishers {
  /// A publisher that publishes only elements that don't match the previous element.
  public typealias RemoveDuplicates<Upstream: Publisher> = ElementOperator<
    ElementStepRemoveDuplicates<Upstream>
  >
}
