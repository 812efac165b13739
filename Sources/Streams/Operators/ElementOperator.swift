extension Publishers {
  /// A publisher that turns each upstream element into zero or one element with a `Step`, and
  /// can neither fail nor end the stream itself: the one type behind ``Publishers/Map``,
  /// ``Publishers/CompactMap``, ``Publishers/Filter``, ``Publishers/RemoveDuplicates``,
  /// ``Publishers/Drop``, ``Publishers/Scan``, ``Publishers/MapError``,
  /// ``Publishers/SetFailureType`` and ``Publishers/MeasureInterval``.
  ///
  /// It takes no lock and allocates nothing per value: it hands the upstream subscription
  /// straight to the downstream subscriber, and a dropped element is replaced by asking
  /// upstream for one more, so demand stays exact. Each subscription starts from its own copy
  /// of `step`, so the state of `removeDuplicates`, `dropFirst` and `scan` is per subscription.
  public struct ElementOperator<Step: ElementStep>: Publisher {
    /// The operator publishes what its step returns.
    public typealias Output = Step.Output
    /// The operator fails with its step's failure type.
    public typealias Failure = Step.Failure

    /// The publisher from which this publisher receives elements.
    public let upstream: Step.Upstream
    /// What the operator does with each element; each subscription starts from this value.
    public let step: Step
    @usableFromInline let convert: (Step.Upstream.Failure) -> Failure

    /// Creates a publisher that republishes what `step` returns for `upstream`'s elements,
    /// and converts `upstream`'s failure with `convert` (`mapError`, `setFailureType`).
    @inlinable public init(
      upstream: Step.Upstream, step: Step,
      convert: @escaping (Step.Upstream.Failure) -> Failure
    ) {
      self.upstream = upstream
      self.step = step
      self.convert = convert
    }

    /// Attaches the subscriber behind a stateless stage that runs the step.
    @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      upstream.subscribe(ElementStage(downstream: subscriber, convert: convert, step: step))
    }
  }
}

extension Publishers.ElementOperator where Failure == Step.Upstream.Failure {
  /// Creates a publisher that republishes what `step` returns for `upstream`'s elements and
  /// fails when `upstream` fails.
  @inlinable public init(upstream: Step.Upstream, step: Step) {
    self.init(upstream: upstream, step: step, convert: { $0 })
  }
}

extension Publishers.ElementOperator: CustomStringConvertible {
  /// The operator the user wrote (`Map`, `Filter`, `RemoveDuplicates`…), not the shared type
  /// behind its typealias.
  public var description: String { Step.operatorName }
}
