extension Publisher where Failure == Never {
  /// Changes the failure type declared by a publisher that cannot fail.
  ///
  /// Use it to match the failure type of another publisher you combine with this one.
  @inlinable public func setFailureType<E: Error>(
    to failureType: E.Type
  )
    -> Publishers.SetFailureType<
      Self, E
    >
  {
    Publishers.SetFailureType(
      upstream: self, step: ElementStepPass(), convert: { (_: Never) -> E in })
  }
}

extension Publishers {
  /// A publisher that appears to send a specified failure type, though it never fails.
  public typealias SetFailureType<Upstream: Publisher, Failure: Error> = ElementOperator<
    ElementStepPass<Upstream, Failure>
  >
}
