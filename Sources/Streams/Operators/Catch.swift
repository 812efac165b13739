extension Publisher {
  /// Handles an error from the upstream publisher by replacing it with another publisher.
  ///
  /// The new publisher is asked for the demand the subscriber still had outstanding.
  ///
  /// ```swift
  /// let safe = fetchUser().catch { _ in Just(User.guest) }
  /// ```
  @inlinable public func `catch`<P: Publisher>(
    _ handler: @escaping @Sendable (Failure) -> P
  ) -> Publishers.Catch<Self, P> where P.Output == Output {
    Publishers.Catch(upstream: self, handler: handler)
  }
}

extension Publishers {
  /// A publisher that handles an error from the upstream by switching to another publisher.
  public struct Catch<Upstream: Publisher, NewPublisher: Publisher>: Publisher
  where Upstream.Output == NewPublisher.Output {
    /// Catch publishes the upstream's elements, then the new publisher's.
    public typealias Output = Upstream.Output
    /// Catch fails when the new publisher fails.
    public typealias Failure = NewPublisher.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// Returns the publisher that replaces the upstream after it fails.
    public let handler: @Sendable (Upstream.Failure) -> NewPublisher

    /// Creates a publisher that switches to `handler(error)` when `upstream` fails.
    @inlinable public init(
      upstream: Upstream, handler: @escaping @Sendable (Upstream.Failure) -> NewPublisher
    ) {
      self.upstream = upstream
      self.handler = handler
    }

    /// Attaches the subscriber to the upstream, and to the replacement after a failure.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let handler = handler
      upstream.subscribe(
        RelayStage(
          relay: DemandRelay(downstream: subscriber),
          recover: { (error: Upstream.Failure, relay) in relay.continueWith { handler(error) } }))
    }
  }
}
