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
  public typealias Zip<A: Publisher, B: Publisher> = Grouped<A, B, ValuesInOrder>
  where A.Failure == B.Failure

  /// A publisher that groups the values of three upstreams in order.
  public typealias Zip3<A: Publisher, B: Publisher, C: Publisher> = Grouped3<A, B, C, ValuesInOrder>
  where A.Failure == B.Failure, B.Failure == C.Failure

  /// A publisher that groups the values of four upstreams in order.
  public typealias Zip4<A: Publisher, B: Publisher, C: Publisher, D: Publisher> =
    Grouped4<A, B, C, D, ValuesInOrder>
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure
}
