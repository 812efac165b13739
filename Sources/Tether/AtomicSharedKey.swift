/// A key whose storage can apply a read-modify-write atomically with respect to every other
/// writer of that storage: other holders, other processes, other machines.
///
/// `Shared.update(_:)` uses this to make `$counter.update { $0 += 1 }` exact where the value
/// lives. The key reads the latest *stored* value (or `initialValue` when nothing is stored),
/// applies `transform`, stores the result atomically, and resumes `continuation` with the
/// stored value. On a conflict (someone else wrote first) the key runs `transform` again on
/// the newer value, so `transform` may run more than once; it has no side effects besides its
/// argument.
///
/// ```swift
/// extension MyKey: AtomicSharedKey {
///   func update(
///     _ transform: @escaping @Sendable (inout Value) throws -> Void,
///     initialValue: Value,
///     continuation: UpdateContinuation<Value>
///   ) {
///     // lock the storage, read, transform, write, unlock, then:
///     continuation.resume(returning: stored)
///   }
/// }
/// ```
///
/// A thrown `transform` error ends the update without storing anything: resume with it.
///
/// Resume concurrent updates in the order their values were stored (resuming on one serial
/// queue, or in storage order after the storage's lock is released): the holder takes each
/// stored value as it is resumed, so the last one resumed is the value it keeps.
public protocol AtomicSharedKey<Value>: SharedKey {
  /// Applies `transform` to the latest stored value atomically, stores the result and
  /// resumes `continuation` exactly once with the stored value, or with an error.
  ///
  /// Tether calls this outside of any lock. `initialValue` is the holder's declared default,
  /// the value to transform when nothing is stored.
  func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void,
    initialValue: Value,
    continuation: UpdateContinuation<Value>
  )
}

/// A continuation an ``AtomicSharedKey`` resumes exactly once with the outcome of an update.
///
/// It may be resumed synchronously inside `update(_:initialValue:continuation:)` or later from
/// any thread. Resuming twice, or dropping it without resuming, is reported as a programmer
/// error (a dropped continuation counts as a failed update).
///
/// The resume methods' `fileID` and `line` parameters locate a misuse: leave them to their
/// defaults, and a second resume is reported at the line that made it (see `TetherIssue`).
public struct UpdateContinuation<Value: Sendable>: Sendable {
  let box: ContinuationBox<Versioned<Result<Value, any Error>>>

  /// Creates a continuation that reports its result to `callback`.
  public init(_ callback: @escaping @Sendable (Result<Value, any Error>) -> Void) {
    self.init(observer: IssueReporting.observer, callback)
  }

  init(
    observer: IssueReporting.Observer?,
    _ callback: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    self.init(observer: observer, versioned: { callback($0.outcome) })
  }

  /// A continuation whose callback also gets the version the key says it stored.
  init(
    observer: IssueReporting.Observer?,
    versioned callback: @escaping @Sendable (Versioned<Result<Value, any Error>>) -> Void
  ) {
    box = ContinuationBox(
      name: { "UpdateContinuation<\(Value.self)>" }, observer: observer,
      abandoned: { Versioned(.failure(ContinuationNotResumed())) }, callback: callback)
  }

  /// Resumes with the value now stored (the transformed one).
  public func resume(
    returning storedValue: Value, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(.success(storedValue)), fileID: fileID, line: line)
  }
  /// Resumes with the value now stored at `version` (`nil`: unknown): the reference's next
  /// save is conditional on it, and a delivery of it is recognised as this process's own.
  package func resume(
    returning storedValue: Value, version: SharedVersion?, fileID: StaticString = #fileID,
    line: UInt = #line
  ) {
    box.resume(Versioned(.success(storedValue), version: version), fileID: fileID, line: line)
  }
  /// Resumes with a failure: nothing was stored, and the holder keeps its value.
  public func resume(throwing error: any Error, fileID: StaticString = #fileID, line: UInt = #line)
  {
    box.resume(Versioned(.failure(error)), fileID: fileID, line: line)
  }
  /// Resumes with a result.
  public func resume(
    with result: Result<Value, any Error>, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(result), fileID: fileID, line: line)
  }
}
