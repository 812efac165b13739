/// A transform that a `@Sendable` closure can call without capturing a metatype.
///
/// The overloads of `flatMap(maxPublishers:_:)` and `switchToLatest()` for mismatched failure
/// types hand their operator a `@Sendable` closure that retypes each inner publisher with
/// `setFailureType(to:)`. A closure written where the inner type is known to be a `Publisher`
/// captures that conformance, and with it a metatype that is not `Sendable` (Swift 6.2's
/// `SendableMetatype` checking rejects it). So the closure is built by the unconstrained
/// functions below, and the retyping is reached through this existential, named by its input
/// and output types only. (`ScheduledTarget` works around the same check in the same way.)
protocol SendableTransform<Input, Output>: Sendable {
  associatedtype Input
  associatedtype Output
  /// Transforms one value.
  func apply(_ input: Input) -> Output
}

/// Retypes a publisher that cannot fail to fail with `Failure`.
struct RetypeFailure<Inner: Publisher, Failure: Error>: SendableTransform
where Inner.Failure == Never {
  func apply(_ inner: Inner) -> Publishers.SetFailureType<Inner, Failure> {
    inner.setFailureType(to: Failure.self)
  }
}

/// `transform` as a `@Sendable` closure.
func sendableClosure<A, B>(_ transform: any SendableTransform<A, B>) -> @Sendable (A) -> B {
  { transform.apply($0) }
}

/// A `@Sendable` closure that applies `first`, then `second`.
func sendableClosure<A, B, C>(
  _ first: @escaping @Sendable (A) -> B, then second: any SendableTransform<B, C>
) -> @Sendable (A) -> C {
  { second.apply(first($0)) }
}
