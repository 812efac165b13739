extension Publisher {
  /// Resubscribes to the upstream publisher when it fails, up to `retries` times, and
  /// forwards the failure after that.
  ///
  /// Each new subscription is asked for the demand the subscriber still had outstanding, so
  /// no element is delivered beyond demand. A publisher that fails at once is retried at
  /// once, on the same thread.
  ///
  /// ```swift
  /// let resilient = fetchConfig().retry(3)
  /// ```
  @inlinable public func retry(_ retries: Int) -> Publishers.Retry<Self> {
    Publishers.Retry(upstream: self, retries: retries)
  }
}

extension Publishers {
  /// A publisher that resubscribes to its upstream when it fails, a limited number of times.
  public struct Retry<Upstream: Publisher>: Publisher {
    /// Retry publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Retry fails with the upstream's last failure.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The most times to resubscribe; `nil` resubscribes without limit.
    public let retries: Int?

    /// Creates a publisher that resubscribes to `upstream` up to `retries` times (`nil`: no
    /// limit).
    @inlinable public init(upstream: Upstream, retries: Int?) {
      self.upstream = upstream
      self.retries = retries.map { Swift.max(0, $0) }
    }

    /// Attaches the subscriber behind a stage that resubscribes after a failure.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        retryStage(relay: DemandRelay(downstream: subscriber), upstream: upstream, left: retries))
    }
  }
}

/// A stage that forwards one subscription to `upstream` and, after a failure, subscribes to it
/// again through a new stage while `left` allows (`nil`: without limit).
@inlinable
func retryStage<Upstream: Publisher, Downstream: Subscriber>(
  relay: DemandRelay<Downstream>, upstream: Upstream, left: Int?
) -> RelayStage<Upstream.Failure, Downstream>
where Downstream.Input == Upstream.Output, Downstream.Failure == Upstream.Failure {
  RelayStage(relay: relay) { completion, relay in
    guard case .failure = completion, left.map({ $0 > 0 }) ?? true else {
      return relay.finish(completion)
    }
    guard relay.detach() else { return }
    upstream.subscribe(retryStage(relay: relay, upstream: upstream, left: left.map { $0 - 1 }))
  }
}
