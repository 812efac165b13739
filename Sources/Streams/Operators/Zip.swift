extension Publisher {
  /// Publishes pairs of values: the n-th value of this publisher with the n-th value of
  /// `other`.
  ///
  /// Demand from the subscriber goes to both upstreams; a value waits in a buffer until its
  /// partner arrives. The publisher finishes once an upstream has finished and every value it
  /// sent has been paired (no further pair is possible), cancelling the other upstream; it
  /// fails as soon as either fails.
  ///
  /// ```swift
  /// requests.zip(responses).sink { request, response in log(request, response) }
  /// ```
  public func zip<P: Publisher>(_ other: P) -> Publishers.Zip<Self, P>
  where P.Failure == Failure {
    Publishers.Zip(self, other)
  }

  /// Publishes triples of values: the n-th value of this publisher and of two others.
  public func zip<P: Publisher, Q: Publisher>(
    _ publisher1: P, _ publisher2: Q
  ) -> Publishers.Zip3<Self, P, Q> where P.Failure == Failure, Q.Failure == Failure {
    Publishers.Zip3(self, publisher1, publisher2)
  }

  /// Publishes quadruples of values: the n-th value of this publisher and of three others.
  ///
  /// Demand, completion and failure work as for two publishers: demand goes to all four
  /// upstreams, the result finishes once a finished upstream has nothing left to pair
  /// (cancelling the others), and the first failure is forwarded at once and cancels the other
  /// three.
  public func zip<P: Publisher, Q: Publisher, R: Publisher>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R
  ) -> Publishers.Zip4<Self, P, Q, R>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    Publishers.Zip4(self, publisher1, publisher2, publisher3)
  }
}

extension Publisher {
  /// Publishes `transform` applied to the n-th value of this publisher and of `other`.
  ///
  /// ```swift
  /// lefts.zip(rights) { $0 + $1 }.sink { print($0) }
  /// ```
  public func zip<P: Publisher, T>(
    _ other: P, _ transform: @escaping @Sendable (Output, P.Output) -> T
  ) -> Publishers.Map<Publishers.Zip<Self, P>, T> where P.Failure == Failure {
    zip(other).map { transform($0.0, $0.1) }
  }

  /// Publishes `transform` applied to the n-th value of this publisher and of two others.
  public func zip<P: Publisher, Q: Publisher, T>(
    _ publisher1: P, _ publisher2: Q,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output) -> T
  ) -> Publishers.Map<Publishers.Zip3<Self, P, Q>, T>
  where P.Failure == Failure, Q.Failure == Failure {
    zip(publisher1, publisher2).map { transform($0.0, $0.1, $0.2) }
  }

  /// Publishes `transform` applied to the n-th value of this publisher and of three others.
  ///
  /// ```swift
  /// reads.zip(parses, checks, writes) { Stage($0, $1, $2, $3) }
  /// ```
  public func zip<P: Publisher, Q: Publisher, R: Publisher, T>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output, R.Output) -> T
  ) -> Publishers.Map<Publishers.Zip4<Self, P, Q, R>, T>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    zip(publisher1, publisher2, publisher3).map { transform($0.0, $0.1, $0.2, $0.3) }
  }
}

extension Publishers {
  /// A publisher that pairs the values of two upstreams in order.
  public struct Zip<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B

    /// Creates a publisher that zips `a` and `b`.
    public init(_ a: A, _ b: B) {
      self.a = a
      self.b = b
    }

    /// Attaches the subscriber, then subscribes to both upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, grouping: .inOrder)
    }
  }

  /// A publisher that groups the values of three upstreams in order.
  public struct Zip3<A: Publisher, B: Publisher, C: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output, C.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C

    /// Creates a publisher that zips `a`, `b` and `c`.
    public init(_ a: A, _ b: B, _ c: C) {
      self.a = a
      self.b = b
      self.c = c
    }

    /// Attaches the subscriber, then subscribes to the three upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, c, grouping: .inOrder)
    }
  }

  /// A publisher that groups the values of four upstreams in order.
  public struct Zip4<A: Publisher, B: Publisher, C: Publisher, D: Publisher>: Publisher
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure {
    /// The kind of values published: a tuple of one value from each upstream.
    public typealias Output = (A.Output, B.Output, C.Output, D.Output)
    /// The kind of errors published: the upstreams'.
    public typealias Failure = A.Failure

    /// The first upstream publisher.
    public let a: A
    /// The second upstream publisher.
    public let b: B
    /// The third upstream publisher.
    public let c: C
    /// The fourth upstream publisher.
    public let d: D

    /// Creates a publisher that zips `a`, `b`, `c` and `d`.
    public init(_ a: A, _ b: B, _ c: C, _ d: D) {
      self.a = a
      self.b = b
      self.c = c
      self.d = d
    }

    /// Attaches the subscriber, then subscribes to the four upstreams.
    @inlinable
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscribeGroups(subscriber, of: a, b, c, d, grouping: .inOrder)
    }
  }
}
