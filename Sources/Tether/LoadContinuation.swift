/// A continuation a key resumes exactly once with the outcome of a load.
///
/// It may be resumed synchronously inside `load(context:continuation:)` (that is how a
/// property wrapper gets its value during `init`) or later from any thread.
public struct LoadContinuation<Value: Sendable>: Sendable {
  let callback: @Sendable (Result<Value?, any Error>) -> Void

  /// Creates a continuation that reports its result to `callback`. A `nil` success means
  /// "use the initial value". Tether creates these; custom tests of a key may too.
  public init(_ callback: @escaping @Sendable (Result<Value?, any Error>) -> Void) {
    self.callback = callback
  }

  /// Resumes with a loaded value.
  public func resume(returning value: Value) { callback(.success(value)) }
  /// Resumes with a failure; the holder keeps its value and sets `loadError`.
  public func resume(throwing error: any Error) { callback(.failure(error)) }
  /// Resumes saying nothing is stored; the holder uses its declared default.
  public func resumeReturningInitialValue() { callback(.success(nil)) }
  /// Resumes with a result: a value, `nil` for the initial value, or an error.
  public func resume(with result: Result<Value?, any Error>) { callback(result) }
}
