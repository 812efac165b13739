extension Publisher {
  /// Publishes the first element of the stream, then finishes and cancels upstream.
  @inlinable public func first() -> Publishers.First<Self> {
    Publishers.First(upstream: self) { _ in true }
  }

  /// Publishes the first element that satisfies the predicate, then finishes and cancels
  /// upstream.
  @inlinable public func first(
    where predicate: @escaping @Sendable (Output) -> Bool
  )
    -> Publishers.FirstWhere<Self>
  {
    Publishers.FirstWhere(upstream: self, predicate: predicate)
  }
}

extension Publishers {
  /// A publisher that publishes the first element of a stream, then finishes: a
  /// ``Publishers/FirstWhere`` whose predicate accepts every element.
  public typealias First<Upstream: Publisher> = FirstWhere<Upstream>

  /// A publisher that publishes the first element that satisfies a predicate, then finishes.
  public typealias FirstWhere<Upstream: Publisher> = PredicateGate<Upstream, FirstWhereRule>

  /// The rule of ``Publishers/FirstWhere``: the first element the predicate accepts.
  public enum FirstWhereRule: PredicateGateRule {
    /// ``Publishers/PredicateGateKind/firstWhere``.
    @inlinable public static var gate: PredicateGateKind { .firstWhere }
  }
}
