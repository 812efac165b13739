extension Publisher {
  /// Replaces `nil` elements with the given element.
  ///
  /// ```swift
  /// let names = optionalNames.replaceNil(with: "anonymous")
  /// ```
  @inlinable public func replaceNil<T: Sendable>(
    with output: T
  ) -> Publishers.Map<Self, T> where Output == T? {
    Publishers.Map(upstream: self) { $0 ?? output }
  }
}
