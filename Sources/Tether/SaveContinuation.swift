/// A continuation a key resumes exactly once with the outcome of a save.
///
/// It may be resumed synchronously inside `save(_:context:continuation:)` or later from any
/// thread. Resuming twice, or dropping it without resuming, is reported as a programmer error
/// (a dropped continuation counts as a failed save).
///
/// The resume methods' `fileID` and `line` parameters locate a misuse: leave them to their
/// defaults, and a second resume is reported at the line that made it (see `TetherIssue`).
///
/// A key whose storage has versions also finds here, in ``version``, the version the saved
/// value was derived from, and writes only if the storage is still at it.
public struct SaveContinuation: Sendable {
  let box: ContinuationBox<Versioned<Result<Void, any Error>>>
  /// The version of the stored value that the saved value was derived from.
  ///
  /// It is the version current when the `withLock` body (or the `save()`) ran, captured under
  /// the value's lock, as the key handed it over with a load or a subscription's yield; a
  /// change of someone else's that arrived while the body ran, or while an earlier save was in
  /// flight, is newer than it. A key whose storage has versions writes only if the stored
  /// version is still this one, and otherwise fails the save with its conflict error, so that
  /// nothing is overwritten unseen. After this process's own successful
  /// ``resume(version:fileID:line:)``, a later save derived from the version that write
  /// replaced gets the written version here instead.
  ///
  /// `nil` when the key never gave a version: keys without versions, or nothing loaded yet.
  /// It is also `nil` for a continuation made with ``init(_:callback:)``.
  public let version: SharedVersion?
  /// For a save made by a reference: where a key reports the outcome of its own background
  /// retry of the save (`resolvedLater(with:)`).
  let resolvedLater: (@Sendable (Result<Void, any Error>) -> Void)?

  /// Creates a continuation that reports its result to `callback`.
  public init(_ callback: @escaping @Sendable (Result<Void, any Error>) -> Void) {
    self.init(observer: IssueReporting.observer, callback)
  }

  /// Creates a continuation for a save derived from `version` (see ``version``), as when
  /// calling a key's `save` directly, in a test or from a key that wraps another: `description`
  /// names the key in reports of misuse (resumed twice or never).
  public init(
    _ description: @autoclosure @escaping @Sendable () -> String = "",
    version: SharedVersion?,
    callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    let description = description()
    self.init(
      observer: IssueReporting.observer,
      name: description.isEmpty ? nil : "The SaveContinuation of '\(description)'",
      version: version, callback)
  }

  /// Creates a continuation as swift-sharing spells it: `description` names the key in
  /// reports of misuse (resumed twice or never).
  public init(
    _ description: @autoclosure @escaping @Sendable () -> String = "",
    callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    let description = description()
    self.init(
      observer: IssueReporting.observer,
      name: description.isEmpty ? nil : "The SaveContinuation of '\(description)'", callback)
  }

  init(
    observer: IssueReporting.Observer?, name: String? = nil, version: SharedVersion? = nil,
    resolvedLater: (@Sendable (Result<Void, any Error>) -> Void)? = nil,
    _ callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    self.init(
      observer: observer, name: name, version: version, resolvedLater: resolvedLater,
      versioned: { callback($0.outcome) })
  }

  /// A continuation whose callback also gets the version the key says it wrote.
  init(
    observer: IssueReporting.Observer?, name: String? = nil, version: SharedVersion? = nil,
    resolvedLater: (@Sendable (Result<Void, any Error>) -> Void)? = nil,
    versioned callback: @escaping @Sendable (Versioned<Result<Void, any Error>>) -> Void
  ) {
    self.version = version
    self.resolvedLater = resolvedLater
    box = ContinuationBox(
      name: { name ?? "SaveContinuation" }, observer: observer,
      abandoned: { Versioned(.failure(ContinuationNotResumed())) }, callback: callback)
  }

  /// Resumes saying the value was saved.
  public func resume(fileID: StaticString = #fileID, line: UInt = #line) {
    box.resume(Versioned(.success(())), fileID: fileID, line: line)
  }
  /// Resumes saying the value was saved as `version` (see ``SharedVersion``).
  ///
  /// Tether remembers that this process wrote it: a later save derived from the version this
  /// one replaced gets `version` as its continuation's ``version``, so it goes on over its own
  /// write instead of failing against it. (It can only do so for saves made after this resume; a
  /// key that starts the next write before this one is answered maps versions itself.)
  public func resume(
    version: SharedVersion, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(.success(()), version: version), fileID: fileID, line: line)
  }
  /// Resumes with a failure; the holder keeps its in-memory value and sets `saveError`.
  public func resume(throwing error: any Error, fileID: StaticString = #fileID, line: UInt = #line)
  {
    box.resume(Versioned(.failure(error)), fileID: fileID, line: line)
  }
  /// Resumes with a result.
  public func resume(
    with result: Result<Void, any Error>, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(result), fileID: fileID, line: line)
  }

  /// Reports how the key's own background retry of a save this continuation already resumed
  /// with a failure ended: written after all (an offline change that landed once the store was
  /// back), and `saveError` clears; or refused (a conflict), and `saveError` says so. Either
  /// way only unless a later save has reported its outcome since. It is not a second resume,
  /// and may be called from any thread.
  package func resolvedLater(with result: Result<Void, any Error>) {
    resolvedLater?(result)
  }
}
