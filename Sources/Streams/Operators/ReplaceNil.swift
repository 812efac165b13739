extension Publisher {
  /// Replaces `nil` elements with the given element.
  ///
  /// ```swift
  /// let names = optionalNames.replaceNil(with: "anonymous")
  /// ```
  @inlinable public func replaceNil<T: Sendable>(
    with output: T
  ) -> Publishers.Map<Self, T> where Output == T? {
    map { $0 ?? output }
  }
}
