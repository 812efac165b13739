/// The `step`s that several reducing operators share, each written once for the plain and the
/// throwing operator (typed throws: `Never` for `Publishers.Reduce`, `any Error` for
/// `Publishers.TryReduce`).
///
/// They are functions an operator's step closure calls, not closures they return: converting
/// a `throws(Never)` closure to the non-throwing step type would need a reabstraction thunk.
@usableFromInline
enum ReduceStep {
  /// The step of `contains` and `allSatisfy`: the result is `!found` until an element for
  /// which `predicate` returns `found`, which makes it `found` and ends the stream.
  @inlinable
  static func search<Input, E: Error>(
    _ result: inout Bool?, _ input: Input, until found: Bool,
    _ predicate: (Input) throws(E) -> Bool
  ) throws(E) -> Bool {
    guard try predicate(input) == found else { return false }
    result = found
    return true
  }

  /// The step of `min` and `max`: the result is the first element, replaced by each later
  /// element for which `replaces(element, result)` holds.
  @inlinable
  static func extremum<Input, E: Error>(
    _ result: inout Input?, _ input: Input, _ replaces: (Input, Input) throws(E) -> Bool
  ) throws(E) -> Bool {
    if let current = result, try !replaces(input, current) { return false }
    result = input
    return false
  }
}
