extension Publisher {
  /// Publishes a tuple of the latest values of this publisher and `other` whenever either
  /// produces a value, once both have produced one.
  ///
  /// Demand from the subscriber is passed to both upstreams, as in Combine. A value that
  /// arrives while the subscriber has no demand still becomes the latest value of its
  /// upstream, but produces no tuple; the next value after the subscriber asks again does.
  /// The publisher finishes when both upstreams have finished (even if one never produced a
  /// value), and fails as soon as either fails, cancelling the other.
  ///
  /// ```swift
  /// username.combineLatest(password).sink { user, password in validate(user, password) }
  /// ```
  public func combineLatest<P: Publisher>(_ other: P) -> Publishers.CombineLatest<Self, P>
  where P.Failure == Failure {
    Publishers.CombineLatest(self, other)
  }

  /// Publishes a tuple of the latest values of this publisher and two others whenever any of
  /// them produces a value, once all have produced one.
  public func combineLatest<P: Publisher, Q: Publisher>(
    _ publisher1: P, _ publisher2: Q
  ) -> Publishers.CombineLatest3<Self, P, Q> where P.Failure == Failure, Q.Failure == Failure {
    Publishers.CombineLatest3(self, publisher1, publisher2)
  }

  /// Publishes a tuple of the latest values of this publisher and three others whenever any
  /// of them produces a value, once all have produced one.
  ///
  /// Demand, completion and failure work as for two publishers: demand goes to all four
  /// upstreams, the result finishes when all four have finished, and the first failure is
  /// forwarded at once and cancels the other three.
  public func combineLatest<P: Publisher, Q: Publisher, R: Publisher>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R
  ) -> Publishers.CombineLatest4<Self, P, Q, R>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    Publishers.CombineLatest4(self, publisher1, publisher2, publisher3)
  }
}

extension Publisher {
  /// Publishes `transform` applied to the latest values of this publisher and `other`
  /// whenever either produces a value, once both have produced one.
  ///
  /// ```swift
  /// width.combineLatest(height) { $0 * $1 }.sink { print("area", $0) }
  /// ```
  public func combineLatest<P: Publisher, T>(
    _ other: P, _ transform: @escaping @Sendable (Output, P.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest<Self, P>, T> where P.Failure == Failure {
    combineLatest(other).map { transform($0.0, $0.1) }
  }

  /// Publishes `transform` applied to the latest values of this publisher and two others
  /// whenever any of them produces a value, once all have produced one.
  public func combineLatest<P: Publisher, Q: Publisher, T>(
    _ publisher1: P, _ publisher2: Q,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest3<Self, P, Q>, T>
  where P.Failure == Failure, Q.Failure == Failure {
    combineLatest(publisher1, publisher2).map { transform($0.0, $0.1, $0.2) }
  }

  /// Publishes `transform` applied to the latest values of this publisher and three others
  /// whenever any of them produces a value, once all have produced one.
  ///
  /// ```swift
  /// host.combineLatest(port, user, token) { Endpoint($0, $1, $2, $3) }
  /// ```
  public func combineLatest<P: Publisher, Q: Publisher, R: Publisher, T>(
    _ publisher1: P, _ publisher2: Q, _ publisher3: R,
    _ transform: @escaping @Sendable (Output, P.Output, Q.Output, R.Output) -> T
  ) -> Publishers.Map<Publishers.CombineLatest4<Self, P, Q, R>, T>
  where P.Failure == Failure, Q.Failure == Failure, R.Failure == Failure {
    combineLatest(publisher1, publisher2, publisher3).map { transform($0.0, $0.1, $0.2, $0.3) }
  }
}

extension Publishers {
  /// A publisher that publishes the latest values of two upstreams together.
  public typealias CombineLatest<A: Publisher, B: Publisher> = Grouped<A, B, LatestValues>
  where A.Failure == B.Failure

  /// A publisher that publishes the latest values of three upstreams together.
  public typealias CombineLatest3<A: Publisher, B: Publisher, C: Publisher> = Grouped3<
    A, B, C, LatestValues
  >
  where A.Failure == B.Failure, B.Failure == C.Failure

  /// A publisher that publishes the latest values of four upstreams together.
  public typealias CombineLatest4<A: Publisher, B: Publisher, C: Publisher, D: Publisher> =
    Grouped4<A, B, C, D, LatestValues>
  where A.Failure == B.Failure, B.Failure == C.Failure, C.Failure == D.Failure
}
