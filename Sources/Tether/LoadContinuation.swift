/// A continuation a key resumes exactly once with the outcome of a load.
///
/// It may be resumed synchronously inside `load(context:continuation:)` (that is how a
/// property wrapper gets its value during `init`) or later from any thread.
///
/// Resuming it a second time is a programmer error: Tether reports it (see
/// `TetherIssueRecorder` in `TetherTesting`) and ignores the extra result. Dropping it without
/// resuming is reported too, and the load then fails with an error, so nothing waits forever.
public struct LoadContinuation<Value: Sendable>: Sendable {
  let box: ContinuationBox<Result<Value?, any Error>>

  /// Creates a continuation that reports its result to `callback`. A `nil` success means
  /// "use the initial value". Tether creates these; custom tests of a key may too.
  public init(_ callback: @escaping @Sendable (Result<Value?, any Error>) -> Void) {
    self.init(observer: IssueReporting.observer, callback)
  }

  /// Creates a continuation as swift-sharing spells it: `description` names the key in
  /// reports of misuse (resumed twice or never).
  public init(
    _ description: @autoclosure @escaping @Sendable () -> String = "",
    callback: @escaping @Sendable (Result<Value?, any Error>) -> Void
  ) {
    let description = description()
    self.init(
      observer: IssueReporting.observer,
      name: description.isEmpty ? nil : "The LoadContinuation of '\(description)'", callback)
  }

  init(
    observer: IssueReporting.Observer?, name: String? = nil,
    _ callback: @escaping @Sendable (Result<Value?, any Error>) -> Void
  ) {
    box = ContinuationBox(
      name: { name ?? "LoadContinuation<\(Value.self)>" }, observer: observer,
      abandoned: { .failure(ContinuationNotResumed()) }, callback: callback)
  }

  /// Resumes with a loaded value.
  public func resume(returning value: Value) { box.resume(.success(value)) }
  /// Resumes with a failure; the holder keeps its value and sets `loadError`.
  public func resume(throwing error: any Error) { box.resume(.failure(error)) }
  /// Resumes saying nothing is stored; the holder uses its declared default.
  public func resumeReturningInitialValue() { box.resume(.success(nil)) }
  /// Resumes with a result: a value, `nil` for the initial value, or an error.
  public func resume(with result: Result<Value?, any Error>) { box.resume(result) }
}
