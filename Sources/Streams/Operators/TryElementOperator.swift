extension Publishers {
  /// A publisher that turns each upstream element into zero or one element with a closure that
  /// may throw; a thrown error fails the stream and cancels upstream.
  ///
  /// `tryMap`, `tryCompactMap`, `tryFilter`, `tryScan`, `tryDrop(while:)` and
  /// `tryRemoveDuplicates(by:)` return it, under their own names (``Publishers/TryMap``,
  /// ``Publishers/TryFilter``…). Each subscription asks `makeTransform` for its own transform,
  /// so the state of `tryScan`, `tryDrop(while:)` and `tryRemoveDuplicates(by:)` is per
  /// subscription.
  public struct TryElementOperator<Upstream: Publisher, Output>: Publisher {
    /// The operator fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    @usableFromInline let makeTransform: () -> (Upstream.Output) throws -> Output?

    /// Creates a publisher whose every subscription republishes what `makeTransform()`'s
    /// transform returns for `upstream`'s elements: `nil` drops one, a throw ends the stream.
    ///
    /// The transform runs on the thread that delivers each element, one element at a time.
    @inlinable public init(
      upstream: Upstream, makeTransform: @escaping () -> (Upstream.Output) throws -> Output?
    ) {
      self.upstream = upstream
      self.makeTransform = makeTransform
    }

    /// Attaches the subscriber behind a transforming stage that can end the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        TryStage<Upstream.Output, Upstream.Failure, S>(
          downstream: subscriber, transform: makeTransform()))
    }
  }
}
