/// A continuation a key resumes exactly once with the outcome of a load.
///
/// It may be resumed synchronously inside `load(context:continuation:)` (that is how a
/// property wrapper gets its value during `init`) or later from any thread.
///
/// Resuming it a second time is a programmer error: Tether reports it (see
/// `TetherIssueRecorder` in `TetherTesting`) and ignores the extra result. Dropping it without
/// resuming is reported too, and the load then fails with an error, so nothing waits forever.
///
/// The resume methods' `fileID` and `line` parameters locate a misuse: leave them to their
/// defaults, and a second resume is reported at the line that made it (see `TetherIssue`).
public struct LoadContinuation<Value: Sendable>: Sendable {
  let box: ContinuationBox<Versioned<Result<Value?, any Error>>>

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
    self.init(observer: observer, name: name, versioned: { callback($0.outcome) })
  }

  /// A continuation whose callback also gets the version the key handed over.
  init(
    observer: IssueReporting.Observer?, name: String? = nil,
    versioned callback: @escaping @Sendable (Versioned<Result<Value?, any Error>>) -> Void
  ) {
    box = ContinuationBox(
      name: { name ?? "LoadContinuation<\(Value.self)>" }, observer: observer,
      abandoned: { Versioned(.failure(ContinuationNotResumed())) }, callback: callback)
  }

  /// Resumes with a loaded value.
  public func resume(returning value: Value, fileID: StaticString = #fileID, line: UInt = #line) {
    box.resume(Versioned(.success(value)), fileID: fileID, line: line)
  }
  /// Resumes with a loaded value and the stored version it has (see ``SharedVersion``): the
  /// holders keep the version with the value, and saves derived from it receive it in
  /// ``SaveContinuation/version``.
  public func resume(
    returning value: Value, version: SharedVersion?, fileID: StaticString = #fileID,
    line: UInt = #line
  ) {
    box.resume(Versioned(.success(value), version: version), fileID: fileID, line: line)
  }
  /// Resumes with a failure; the holder keeps its value and sets `loadError`.
  public func resume(throwing error: any Error, fileID: StaticString = #fileID, line: UInt = #line)
  {
    box.resume(Versioned(.failure(error)), fileID: fileID, line: line)
  }
  /// Resumes saying nothing is stored; the holder uses its declared default.
  public func resumeReturningInitialValue(fileID: StaticString = #fileID, line: UInt = #line) {
    box.resume(Versioned(.success(nil)), fileID: fileID, line: line)
  }
  /// Resumes saying nothing is stored, at `version` (the version of "absent", for a key whose
  /// writes can require that nothing is stored yet).
  public func resumeReturningInitialValue(
    version: SharedVersion?, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(.success(nil), version: version), fileID: fileID, line: line)
  }
  /// Resumes with a result: a value, `nil` for the initial value, or an error.
  public func resume(
    with result: Result<Value?, any Error>, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(result), fileID: fileID, line: line)
  }
}

/// An outcome with the stored version a key handed over with it.
@usableFromInline
struct Versioned<Outcome: Sendable>: Sendable {
  var outcome: Outcome
  var version: SharedVersion?
  /// For a refused save: what the key said is stored now (`version` is its version).
  var conflict: ConflictStored?

  init(_ outcome: Outcome, version: SharedVersion? = nil, conflict: ConflictStored? = nil) {
    self.outcome = outcome
    self.version = version
    self.conflict = conflict
  }
}

/// What a key resuming a save with a conflict said is stored now.
enum ConflictStored: Sendable {
  /// This value (of the key's `Value` type, unless the key erred).
  case value(any Sendable)
  /// Nothing: holders return to their declared default.
  case nothing
  /// The key did not say: Tether loads it.
  case unknown
}
