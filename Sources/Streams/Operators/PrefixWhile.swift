extension Publisher {
  /// Republishes elements while the predicate holds, then finishes (cancelling upstream) at
  /// the first element that fails it; that element is not published.
  ///
  /// ```swift
  /// let warmUp = readings.prefix { $0 < threshold }
  /// ```
  @inlinable public func prefix(
    while predicate: @escaping @Sendable (Output) -> Bool
  ) -> Publishers.PrefixWhile<Self> {
    Publishers.PrefixWhile(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that republishes elements while a predicate holds, then finishes.
  public typealias PrefixWhile<Upstream: Publisher> = PredicateGate<Upstream, PrefixWhileRule>

  /// The rule of ``Publishers/PrefixWhile``: publish while the predicate holds.
  public enum PrefixWhileRule: PredicateGateRule {
    /// ``Publishers/PredicateGateKind/prefixWhile``.
    @inlinable public static var gate: PredicateGateKind { .prefixWhile }
  }
}
