extension Publisher {
  /// Republishes elements up to the specified maximum count, then finishes and cancels
  /// upstream.
  @inlinable public func prefix(_ maxLength: Int) -> Publishers.Prefix<Self> {
    Publishers.Prefix(upstream: self, maxLength: maxLength)
  }
}

extension Publishers {
  /// A publisher that republishes at most a given number of elements, then finishes.
  ///
  /// (Combine calls this type `Publishers.Output`; code that calls `prefix(_:)` is unchanged.)
  public struct Prefix<Upstream: Publisher>: Publisher {
    /// Prefix publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Prefix fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The maximum number of elements to republish; a negative count republishes none.
    public let maxLength: Int

    /// Creates a publisher that republishes at most `maxLength` elements of `upstream`.
    @inlinable public init(upstream: Upstream, maxLength: Int) {
      self.upstream = upstream
      self.maxLength = Swift.max(0, maxLength)
    }

    /// Attaches the subscriber behind a stage that counts the elements and ends the stream.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      var remaining = maxLength
      let stage = FinishingStage(downstream: subscriber, finishAtOnce: maxLength == 0) { _ in
        remaining -= 1
        return remaining > 0 ? .forward : .forwardAndFinish
      }
      upstream.subscribe(stage)
    }
  }
}
