extension Publisher {
  /// Applies a closure that combines an accumulating value with each element, and publishes
  /// the final result when the upstream finishes.
  ///
  /// Upstream is asked for every element at once; the result waits for the subscriber's
  /// demand. A failure is forwarded and the partial result dropped.
  ///
  /// ```swift
  /// let total = amounts.reduce(0, +)
  /// ```
  @inlinable public func reduce<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) -> T
  ) -> Publishers.Reduce<Self, T> {
    Publishers.Reduce(upstream: self, initial: initialResult) { result, input in
      result = nextPartialResult(result!, input)
      return false
    }
  }

  /// Like `reduce(_:_:)`, with a closure that may throw: a thrown error fails the stream
  /// and cancels upstream.
  @inlinable public func tryReduce<T>(
    _ initialResult: T, _ nextPartialResult: @escaping @Sendable (T, Output) throws -> T
  ) -> Publishers.TryReduce<Self, T> {
    Publishers.TryReduce(upstream: self, initial: initialResult) { result, input in
      result = try nextPartialResult(result!, input)
      return false
    }
  }
}

extension Publishers {
  /// A publisher that reduces its upstream's elements to at most one value, published when
  /// the upstream finishes (or earlier, once the answer is known).
  ///
  /// `reduce`, `last()`, `last(where:)`, `contains`, `count()`, `min()`, `max()`,
  /// `allSatisfy` and `ignoreOutput()` return it. (Combine has a type per operator:
  /// `Publishers.Reduce`, `Publishers.Last`, `Publishers.Contains`…; code that calls the
  /// operators is unchanged.)
  public struct Reduce<Upstream: Publisher, Output>: Publisher {
    /// Reduce fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    @usableFromInline let initial: Output?
    @usableFromInline let step: (inout Output?, Upstream.Output) -> Bool

    /// Creates a reducing publisher: each subscription starts from `initial` (`nil`: no
    /// result yet) and folds every element in with `step`, which returns `true` once the
    /// result is final.
    ///
    /// `step` runs on the thread that delivers each element, one element at a time.
    @inlinable public init(
      upstream: Upstream, initial: Output?,
      step: @escaping (inout Output?, Upstream.Output) -> Bool
    ) {
      self.upstream = upstream
      self.initial = initial
      self.step = step
    }

    /// Attaches the subscriber behind a stage that reduces the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let step = step
      upstream.subscribe(
        ReducingStage<Upstream.Output, Failure, S>(
          downstream: subscriber, initial: initial, convert: { $0 },
          step: { (result, input) throws(Failure) -> Bool in step(&result, input) }))
    }
  }

  /// A publisher that reduces its upstream's elements to at most one value with a closure
  /// that may throw; a thrown error fails the stream and cancels upstream.
  ///
  /// `tryReduce`, `tryLast(where:)`, `tryContains(where:)`, `tryMin(by:)`, `tryMax(by:)` and
  /// `tryAllSatisfy` return it.
  public struct TryReduce<Upstream: Publisher, Output>: Publisher {
    /// TryReduce fails with the upstream's error or the error the closure threw.
    public typealias Failure = any Error

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    @usableFromInline let initial: Output?
    @usableFromInline let step: (inout Output?, Upstream.Output) throws -> Bool

    /// Creates a reducing publisher whose `step` may throw; see `Reduce`.
    @inlinable public init(
      upstream: Upstream, initial: Output?,
      step: @escaping (inout Output?, Upstream.Output) throws -> Bool
    ) {
      self.upstream = upstream
      self.initial = initial
      self.step = step
    }

    /// Attaches the subscriber behind a stage that reduces the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(
        ReducingStage<Upstream.Output, Upstream.Failure, S>(
          downstream: subscriber, initial: initial, convert: { $0 }, step: step))
    }
  }
}
