extension Publisher {
  /// Like `drop(while:)`, with a predicate that may throw: a thrown error fails the stream
  /// and cancels upstream.
  @inlinable public func tryDrop(
    while predicate: @escaping @Sendable (Output) throws -> Bool
  ) -> Publishers.TryDropWhile<Self> {
    Publishers.TryDropWhile(upstream: self) {
      var latch = PredicateLatch()
      return { try latch.holds(for: $0, predicate) ? nil : $0 }
    }
  }
}

extension Publishers {
  /// A publisher that omits elements until a predicate that may throw returns `false`.
  public typealias TryDropWhile<Upstream: Publisher> = TryElementOperator<
    Upstream, Upstream.Output
  >
}
