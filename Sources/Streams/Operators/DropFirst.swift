extension Publisher {
  /// Omits the specified number of elements before republishing later ones.
  ///
  /// Each dropped element is replaced by asking upstream for one more, so the downstream
  /// subscriber's demand counts only the elements it receives.
  @inlinable public func dropFirst(_ count: Int = 1) -> Publishers.Drop<Self> {
    Publishers.Drop(upstream: self, count: count)
  }
}

extension Publishers {
  /// A publisher that omits a specified number of elements before republishing later ones.
  public struct Drop<Upstream: Publisher>: Publisher {
    /// Drop publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// Drop fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The number of elements to drop; a negative count drops nothing.
    public let count: Int

    /// Creates a publisher that drops the first `count` elements of `upstream`.
    @inlinable public init(upstream: Upstream, count: Int) {
      self.upstream = upstream
      self.count = Swift.max(0, count)
    }

    /// Attaches the subscriber behind a stage that counts the dropped elements.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ElementStage(downstream: subscriber, step: ElementStepDrop(count: count)))
    }
  }
}
