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
  /// The version of the stored value that the saved value was derived from: write only if the
  /// storage is still at it.
  ///
  /// Tether keeps at most one save of a reference in flight, so this is always the newest
  /// version the reference knows the value came from: the one the key delivered with the value
  /// the `withLock` body (or the `save()`) started from, or the one the previous save resumed
  /// with (``resume(version:fileID:line:)``). If someone else's newer value arrived after the
  /// body ran, it stays the older version, so the write is refused (nothing is overwritten
  /// unseen); resume then with ``resume(conflict:storedValue:version:fileID:line:)``.
  ///
  /// ``SharedVersion/absent`` (see ``SharedVersion/isAbsent``) when the value was derived from
  /// nothing stored: a change made before the first load answered, or after a deletion. Write
  /// only if nothing is stored then. `nil` when the key never gave a version (keys without
  /// versions), and for a continuation made with ``init(_:callback:)``.
  public let version: SharedVersion?
  /// The version to write over, asked when the write starts: ``version``, unless the reference
  /// heard since of a write of its own that no save asked for (``resolvedLater(with:version:)``,
  /// `SharedSubscriber.yieldOwnWrite(version:)`) that this save's value builds on. A key that
  /// queues its writes (one behind its own background retry, say) reads it when the write
  /// starts, so that it does not fail on its own retry's write. The engine decides it
  /// (`VersionEngine.condition(for:)`): someone else's version taken since still leaves the
  /// older one, so the write is refused.
  package var versionNow: SharedVersion? { currentVersion?() ?? version }
  /// For a save made by a reference: where a key reports the outcome of its own background
  /// retry of the save, and the version it wrote (`resolvedLater(with:version:)`).
  let resolvedLater: (@Sendable (Result<Void, any Error>, SharedVersion?) -> Void)?
  /// For a save made by a reference: the version it is conditional on now (``versionNow``).
  let currentVersion: (@Sendable () -> SharedVersion?)?

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
    resolvedLater: (@Sendable (Result<Void, any Error>, SharedVersion?) -> Void)? = nil,
    _ callback: @escaping @Sendable (Result<Void, any Error>) -> Void
  ) {
    self.init(
      observer: observer, name: name, version: version, resolvedLater: resolvedLater,
      currentVersion: nil, versioned: { callback($0.outcome) })
  }

  /// A continuation whose callback also gets the version the key says it wrote.
  init(
    observer: IssueReporting.Observer?, name: String? = nil, version: SharedVersion? = nil,
    resolvedLater: (@Sendable (Result<Void, any Error>, SharedVersion?) -> Void)? = nil,
    currentVersion: (@Sendable () -> SharedVersion?)? = nil,
    versioned callback: @escaping @Sendable (Versioned<Result<Void, any Error>>) -> Void
  ) {
    self.version = version
    self.resolvedLater = resolvedLater
    self.currentVersion = currentVersion
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
  /// The reference then knows the stored version: the next save is derived from it (its
  /// ``version`` is this one), and when the key's subscription or a load delivers this version
  /// back, Tether recognises this process's own write and does not take it as someone else's.
  /// A key whose storage has versions resumes every successful save this way.
  public func resume(
    version: SharedVersion, fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(Versioned(.success(()), version: version), fileID: fileID, line: line)
  }
  /// Resumes saying the save was refused because the storage moved on, handing over what is
  /// stored now: `storedValue` at `version`.
  ///
  /// Tether gives every holder `storedValue` and `version` (as if the key had yielded them) and
  /// sets `saveError` to `error`; changes made while this save was in flight were derived from
  /// the refused value and are refused with it. `storedValue` must be of the key's `Value` type
  /// (the continuation is not generic); a value of another type is reported as a programmer
  /// error, and Tether loads the stored value instead. `update` retries on the handed-over
  /// value (see ``AtomicSharedKey``).
  ///
  /// ```swift
  /// catch let conflict as MyStore.Conflict {
  ///   continuation.resume(
  ///     conflict: conflict, storedValue: conflict.value, version: SharedVersion(conflict.revision))
  /// }
  /// ```
  public func resume<Value: Sendable>(
    conflict error: any Error, storedValue: Value, version: SharedVersion?,
    fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(
      Versioned(.failure(error), version: version, conflict: .value(storedValue)),
      fileID: fileID, line: line)
  }
  /// Resumes saying the save was refused because nothing is stored any more (someone deleted the
  /// value), at `version` (``SharedVersion/deleted(at:)``, or ``SharedVersion/absent``).
  ///
  /// Every holder returns to its declared default at `version`, and `saveError` is `error`.
  public func resume(
    conflict error: any Error, nothingStoredAt version: SharedVersion,
    fileID: StaticString = #fileID, line: UInt = #line
  ) {
    box.resume(
      Versioned(.failure(error), version: version, conflict: .nothing), fileID: fileID,
      line: line)
  }
  /// Resumes saying the save was refused because the storage moved on, without the newer
  /// value: Tether loads it (`load(context:continuation:)` with `.userInitiated`) so that
  /// every holder gets it, and sets `saveError` to `error`.
  public func resume(conflict error: any Error, fileID: StaticString = #fileID, line: UInt = #line)
  {
    box.resume(Versioned(.failure(error), conflict: .unknown), fileID: fileID, line: line)
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
    resolvedLater?(result, nil)
  }
  /// Reports how the key's own background retry ended, as ``resolvedLater(with:)``, and the
  /// version the retry wrote when it landed (`nil`: unknown or not written). The reference takes
  /// that version as its own write: holders keep their value, the next save is conditional on
  /// it, and its delivery is not taken as someone else's change.
  package func resolvedLater(with result: Result<Void, any Error>, version: SharedVersion?) {
    resolvedLater?(result, version)
  }
}
