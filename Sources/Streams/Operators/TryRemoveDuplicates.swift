extension Publisher {
  /// Like `removeDuplicates(by:)`, with a comparison that may throw: a thrown error fails the
  /// stream and cancels upstream.
  @inlinable public func tryRemoveDuplicates(
    by predicate: @escaping @Sendable (Output, Output) throws -> Bool
  ) -> Publishers.TryRemoveDuplicates<Self> {
    Publishers.TryRemoveDuplicates(upstream: self) {
      var previous: Output?
      return { input in
        if let previous, try predicate(previous, input) { return nil }
        previous = input
        return input
      }
    }
  }
}

extension Publishers {
  /// A publisher that republishes an element only if it differs from the previous one, by a
  /// comparison that may throw.
  public typealias TryRemoveDuplicates<Upstream: Publisher> = TryElementOperator<
    Upstream, Upstream.Output
  >
}
