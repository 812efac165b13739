extension Publisher {
  /// Drops elements while the predicate holds, then republishes every element from the first
  /// one that fails it.
  ///
  /// ```swift
  /// let afterWarmUp = readings.drop { $0 < threshold }
  /// ```
  @inlinable public func drop(
    while predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.DropWhile<Self> {
    Publishers.DropWhile(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that omits elements from an upstream publisher until a given closure returns
  /// `false`.
  public typealias DropWhile<Upstream: Publisher> = PredicateGate<Upstream, DropWhileRule>

  /// The rule of ``Publishers/DropWhile``: skip while the predicate holds.
  public enum DropWhileRule: PredicateGateRule {
    /// ``Publishers/PredicateGateKind/dropWhile``.
    @inlinable public static var gate: PredicateGateKind { .dropWhile }
  }
}
