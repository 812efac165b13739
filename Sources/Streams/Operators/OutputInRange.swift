extension Publisher {
  /// Publishes only the element at the given index (counting from zero), then finishes and
  /// cancels upstream.
  @inlinable public func output(at index: Int) -> Publishers.OutputInRange<Self> {
    Publishers.OutputInRange(upstream: self, range: index..<(index + 1))
  }

  /// Publishes the elements whose indices (counting from zero) fall in the range, then
  /// finishes and cancels upstream.
  ///
  /// ```swift
  /// let page = results.output(in: 20..<40)
  /// ```
  @inlinable public func output<R: RangeExpression<Int>>(
    in range: R
  ) -> Publishers.OutputInRange<Self> {
    Publishers.OutputInRange(upstream: self, range: range.relative(to: 0..<Int.max))
  }
}

extension Publishers {
  /// A publisher that publishes the elements in a range of indices, then finishes.
  ///
  /// (Combine calls this type `Publishers.Output`; code that calls `output(at:)` and
  /// `output(in:)` is unchanged.)
  public struct OutputInRange<Upstream: Publisher>: Publisher {
    /// OutputInRange publishes its upstream's elements.
    public typealias Output = Upstream.Output
    /// OutputInRange fails when its upstream fails.
    public typealias Failure = Upstream.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Upstream
    /// The indices of the elements to publish; a negative lower bound counts as zero.
    public let range: Range<Int>

    /// Creates a publisher that publishes `upstream`'s elements with indices in `range`.
    @inlinable public init(upstream: Upstream, range: Range<Int>) {
      self.upstream = upstream
      self.range = Swift.max(0, range.lowerBound)..<Swift.max(0, range.upperBound)
    }

    /// Attaches the subscriber behind a stage that counts elements and ends the stream.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      let range = range
      var index = -1
      let stage = FinishingStage(downstream: subscriber, finishAtOnce: range.isEmpty) { _ in
        index += 1
        if index < range.lowerBound { return .skip }
        return index + 1 < range.upperBound ? .forward : .forwardAndFinish
      }
      upstream.subscribe(stage)
    }
  }
}
