/// Which gate a ``Publishers/PredicateGate`` is: the rule of ``Publishers/DropWhile``,
/// ``Publishers/PrefixWhile`` or ``Publishers/FirstWhere``.
public protocol PredicateGateRule {
  /// What the gate publishes around the first element that its predicate decides on.
  static var gate: Publishers.PredicateGateKind { get }
}

extension Publishers {
  /// What a ``Publishers/PredicateGate`` publishes.
  public enum PredicateGateKind: Sendable {
    /// `drop(while:)`: skips elements while the predicate holds, then publishes every element
    /// from the first one that fails it.
    case dropWhile
    /// `prefix(while:)`: publishes elements while the predicate holds, then finishes at the
    /// first one that fails it (which is not published).
    case prefixWhile
    /// `first(where:)`: publishes the first element the predicate accepts, then finishes.
    case firstWhere
  }

  /// A publisher that republishes its upstream's elements through a gate that a predicate
  /// opens or closes: the one type behind ``Publishers/DropWhile``,
  /// ``Publishers/PrefixWhile`` and ``Publishers/FirstWhere``. A gate that closes finishes
  /// the stream and cancels upstream.
  public struct PredicateGate<Upstream: Publisher, Rule: PredicateGateRule>: Publisher {
    /// The gate publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// The gate fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The closure that the gate asks about each element.
    public let predicate: @Sendable (Output) -> Bool

    /// Creates a publisher that republishes `upstream`'s elements through `Rule`'s gate.
    @inlinable public init(upstream: Upstream, predicate: @escaping @Sendable (Output) -> Bool) {
      self.upstream = upstream
      self.predicate = predicate
    }

    /// Attaches the subscriber behind a stage that asks the predicate and ends the stream
    /// where the gate closes.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let predicate = predicate
      switch Rule.gate {
      case .dropWhile:
        var latch = PredicateLatch()
        upstream.subscribe(
          FinishingStage(downstream: subscriber) {
            latch.holds(for: $0, predicate) ? .skip : .forward
          })
      case .prefixWhile:
        upstream.subscribe(
          FinishingStage(downstream: subscriber) { predicate($0) ? .forward : .finish })
      case .firstWhere:
        upstream.subscribe(
          FinishingStage(downstream: subscriber) { predicate($0) ? .forwardAndFinish : .skip })
      }
    }
  }
}
