extension Publisher {
  /// Combines the values of this publisher and `other` into one stream, in the order they
  /// arrive.
  ///
  /// The merged publisher finishes when both upstreams have finished, and fails as soon as
  /// either fails (cancelling the other). Demand from the subscriber is passed to both
  /// upstreams; values that arrive beyond the subscriber's demand are buffered until it asks
  /// for more.
  ///
  /// ```swift
  /// taps.merge(with: keys).sink { handle($0) }
  /// ```
  public func merge<P: Publisher>(with other: P) -> Publishers.Merge<Self, P>
  where P.Output == Output, P.Failure == Failure {
    Publishers.Merge(self, other)
  }

  /// Combines the values of this publisher and several others of the same type into one
  /// stream, in the order they arrive.
  ///
  /// Finishes when every upstream has finished, fails as soon as one fails.
  public func merge(
    with second: Self, _ third: Self, _ others: Self...
  )
    -> Publishers.MergeMany<
      Self
    >
  {
    Publishers.MergeMany([self, second, third] + others)
  }
}

extension Publishers {
  /// A publisher created by applying the merge function to two upstream publishers.
  public struct Merge<A: Publisher, B: Publisher>: Publisher
  where A.Output == B.Output, A.Failure == B.Failure {
    /// The kind of values published: the upstreams'.
    public typealias Output = A.Output
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// A publisher to merge.
    public let a: A
    /// A second publisher to merge.
    public let b: B

    /// Creates a publisher that merges the values of `a` and `b`.
    public init(_ a: A, _ b: B) {
      self.a = a
      self.b = b
    }

    /// Attaches the subscriber, then subscribes to both upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = MergeCore(subscriber, isOpen: false)
      let subscriptions = [core.subscribeChild(a), core.subscribeChild(b)]
      core.start(subscription: core)
      for subscribe in subscriptions { subscribe?() }
    }

    /// Returns a publisher that also merges `other`.
    public func merge<P: Publisher>(with other: P) -> Publishers.Merge<Self, P>
    where P.Output == Output, P.Failure == Failure {
      Publishers.Merge(self, other)
    }
  }

  /// A publisher that merges the values of any number of upstream publishers of one type.
  public struct MergeMany<Upstream: Publisher>: Publisher {
    /// The kind of values published: the upstreams'.
    public typealias Output = Upstream.Output
    /// The kind of errors published: the upstreams'.
    public typealias Failure = Upstream.Failure

    /// The publishers that this publisher merges.
    public let publishers: [Upstream]

    /// Creates a publisher that merges the given publishers.
    public init(_ upstream: Upstream...) {
      publishers = upstream
    }

    /// Creates a publisher that merges a sequence of publishers.
    public init<S: Swift.Sequence>(_ upstream: S) where S.Element == Upstream {
      publishers = Array(upstream)
    }

    /// Attaches the subscriber, then subscribes to every upstream in order. With no
    /// upstreams it finishes at once.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let core = MergeCore(subscriber, isOpen: true)
      let subscriptions = publishers.map { core.subscribeChild($0) }
      core.close()
      core.start(subscription: core)
      for subscribe in subscriptions { subscribe?() }
    }

    /// Returns a publisher that also merges `other`.
    public func merge(with other: Upstream) -> Publishers.MergeMany<Upstream> {
      Publishers.MergeMany(publishers + [other])
    }
  }
}
