/// The state of `drop(while:)` and `tryDrop(while:)`: whether their predicate has held for
/// every element so far. Once it fails for an element it is not asked again, so every later
/// element passes.
///
/// One latch serves the throwing and the non-throwing predicate (typed throws: `Never` for
/// `drop(while:)`). It lives in the stage's closure, which only the serialised `receive`
/// calls run.
@usableFromInline
struct PredicateLatch {
  @usableFromInline var hasFailed = false

  @inlinable init() {}

  /// Whether `predicate` still holds, asking it about `input` unless it already failed.
  @inlinable
  mutating func holds<Input, E: Error>(
    for input: Input, _ predicate: (Input) throws(E) -> Bool
  ) throws(E) -> Bool {
    if !hasFailed { hasFailed = try !predicate(input) }
    return !hasFailed
  }
}
