extension Publisher {
  /// Ignores every element and republishes only the completion.
  ///
  /// Upstream is asked for every element, whatever the subscriber's demand.
  ///
  /// ```swift
  /// upload.ignoreOutput().sink(receiveCompletion: { print("done: \($0)") }, receiveValue: { _ in })
  /// ```
  @inlinable public func ignoreOutput() -> Publishers.Reduce<Self, Never> {
    Publishers.Reduce(upstream: self, initial: nil) { _, _ in false }
  }
}
