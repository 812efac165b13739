extension Publisher {
  /// Replaces any error from the upstream publisher with the given element, then finishes.
  ///
  /// The replacement counts against demand: it is delivered as soon as the subscriber has
  /// asked for a value.
  @inlinable public func replaceError(with output: Output) -> Publishers.ReplaceError<Self> {
    Publishers.ReplaceError(upstream: self, output: output)
  }
}

extension Publishers {
  /// A publisher that replaces any error from the upstream with an element, then finishes.
  public struct ReplaceError<Upstream: Publisher>: Publisher {
    /// ReplaceError publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// ReplaceError never fails.
    public typealias Failure = Never

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The element published in place of an error.
    public let output: Upstream.Output

    /// Creates a publisher that republishes `upstream` and replaces its error with `output`.
    @inlinable public init(upstream: Upstream, output: Output) {
      self.upstream = upstream
      self.output = output
    }

    /// Attaches the subscriber behind a stage that counts demand for the replacement.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let output = output
      upstream.subscribe(
        RelayStage(
          relay: DemandRelay(downstream: subscriber),
          recover: { (_: Upstream.Failure, relay) in relay.finish(with: output) }))
    }
  }
}
