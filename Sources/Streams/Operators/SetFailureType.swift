extension Publisher where Failure == Never {
  /// Changes the failure type declared by a publisher that cannot fail.
  ///
  /// Use it to match the failure type of another publisher you combine with this one.
  @inlinable public func setFailureType<E: Error>(
    to failureType: E.Type
  )
    -> Publishers.SetFailureType<
      Self, E
    >
  {
    Publishers.SetFailureType(upstream: self)
  }
}

extension Publishers {
  /// A publisher that appears to send a specified failure type, though it never fails.
  public struct SetFailureType<Upstream: Publisher, Failure: Error>: Publisher
  where Upstream.Failure == Never {
    /// SetFailureType publishes its upstream's elements.
    public typealias Output = Upstream.Output

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream

    /// Creates a publisher that republishes `upstream` with the failure type `Failure`.
    @inlinable public init(upstream: Upstream) { self.upstream = upstream }

    /// Attaches the subscriber behind a stage that only retypes the completion.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ElementStage<ElementStepFilter<Output>, Never, S>(
          downstream: subscriber, convert: { (_: Never) -> Failure in }, step: ElementStepFilter()))
    }
  }
}
