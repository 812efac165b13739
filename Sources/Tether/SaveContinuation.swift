/// A continuation a key resumes exactly once with the outcome of a save.
public struct SaveContinuation: Sendable {
  let callback: @Sendable (Result<Void, any Error>) -> Void

  /// Creates a continuation that reports its result to `callback`.
  public init(_ callback: @escaping @Sendable (Result<Void, any Error>) -> Void) {
    self.callback = callback
  }

  /// Resumes saying the value was saved.
  public func resume() { callback(.success(())) }
  /// Resumes with a failure; the holder keeps its in-memory value and sets `saveError`.
  public func resume(throwing error: any Error) { callback(.failure(error)) }
  /// Resumes with a result.
  public func resume(with result: Result<Void, any Error>) { callback(result) }
}
