import Foundation
import Synchronization

/// The throttled write queue of a ``FileStorage``: saves coalesce within the throttle window,
/// reach the storage's serial queue in the order they were decided, and each `.didSet` save
/// carries the version of the file its value was made from (its base), so a save never
/// overwrites a change made by another process that its holders have not seen.
extension FileStorage {
  /// A save waiting for its turn: the newest value of a throttle window.
  struct PendingWrite {
    var encode: @Sendable () throws -> Data
    var decodes: @Sendable (Data) -> Bool
    var options: WriteOptions
    var continuations: [SaveContinuation]
    /// For a `.didSet` save, the version of the file its value was made from: the write
    /// happens only if the file is still that version (or holds the same bytes). `nil` for a
    /// `save()`, which writes unconditionally.
    var base: Base?
    /// The job's place in the queue (set when it is enqueued).
    var ordinal: UInt64 = 0
  }

  /// The version of the file a `.didSet` save's value was made from.
  enum Base: Equatable {
    /// The version the holders had: nothing of this process was waiting to be written.
    case version(Disk)
    /// Whatever the job with this ordinal, enqueued before and not yet written, leaves: the
    /// value builds on that job's value.
    case afterJob(UInt64)
    /// The value builds on a save that lost to another process's change.
    case conflicted
  }

  // MARK: - Saving

  /// Saves the bytes `encode` produces. Returns at once; `continuation` resumes after the
  /// write, or when a newer save replaces this one while both wait for the window, or when
  /// a change made by someone else wins over it.
  ///
  /// The first save after a quiet `window` is written at once; saves inside the window
  /// replace one pending trailing write, written when the window ends. An `immediate` save
  /// writes at once, taking any pending save with it.
  func save(
    encode: @escaping @Sendable () throws -> Data,
    decodes: @escaping @Sendable (Data) -> Bool,
    options: WriteOptions,
    immediate: Bool, window: Duration, clock: any FileStorageClock,
    continuation: SaveContinuation
  ) {
    let (timerToCancel, superseded) = state.withLock {
      state -> (CancelOnce?, [SaveContinuation]) in
      let now = clock.now
      let base = Self.base(for: state, basis: continuation.basis)
      if immediate {
        var continuations = state.pending?.continuations ?? []
        continuations.append(continuation)
        let job = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: continuations,
          base: nil)
        state.pending = nil
        state.lastWrite = now
        enqueue(job, in: &state)
        defer { state.trailingTimer = nil }
        return (state.trailingTimer, [])
      }
      if let pending = state.pending {
        // The newer value replaces the pending one, which will never be written: its save
        // is complete. (Resuming it now also keeps memory flat under a mutation storm.)
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation],
          base: base)
        return (nil, pending.continuations)
      }
      if let lastWrite = state.lastWrite, now - lastWrite < window {
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation],
          base: base)
        // Strong: a pending write keeps its storage (and so its path) until it is written.
        state.trailingTimer = clock.schedule(after: lastWrite + window - now) {
          self.writeTrailing(clock: clock)
        }
        return (nil, [])
      }
      state.lastWrite = now
      enqueue(
        PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation],
          base: base), in: &state)
      return (nil, [])
    }
    timerToCancel?.cancel()
    superseded.forEach { $0.resume() }
  }

  /// Writes the pending save now, if there is one (when a holder goes away, and at exit).
  func flush() {
    let timer: CancelOnce? = state.withLock { state in
      guard let pending = state.pending else { return nil }
      state.pending = nil
      enqueue(pending, in: &state)
      defer { state.trailingTimer = nil }
      return state.trailingTimer
    }
    timer?.cancel()
  }

  /// Waits until every write enqueued so far has finished.
  func waitForWrites() {
    onQueue {}
  }

  private func writeTrailing(clock: any FileStorageClock) {
    state.withLock { state in
      state.trailingTimer = nil
      guard let pending = state.pending else { return }
      state.pending = nil
      state.lastWrite = clock.now
      enqueue(pending, in: &state)
    }
  }

  /// What a `.didSet` save made now is based on. A value made before a change this storage
  /// has started handing to its holder is based on the version from before that change, even
  /// if the save arrives after `seen` moved on (then, if the file differs from that version,
  /// the save is a conflict; a redelivery of the same bytes is none).
  static func base(for state: State, basis: SaveBasis?) -> Base {
    guard let basis, basis.isStale else { return base(for: state) }
    let first = basis.applied + 1
    guard let version = state.before[ObjectIdentifier(basis.changes)]?[first] else {
      return .conflicted
    }
    return .version(version)
  }

  /// What a save made now is based on: the pending save it replaces, the job in line before
  /// it, or the version the holders have.
  static func base(for state: State) -> Base {
    if let pending = state.pending, let base = pending.base { return base }
    if let job = state.inLine { return .afterJob(job) }
    return .version(state.seen)
  }

  /// Must be called with the state locked, so writes reach the queue in decision order.
  /// (`async` only enqueues: nothing is called out under the lock.)
  func enqueue(_ job: PendingWrite, in state: inout State) {
    let job = Self.numbered(job, in: &state)
    async { self.perform(job) }
  }

  /// Gives `job` the next ordinal and makes it the job in line.
  private static func numbered(_ job: PendingWrite, in state: inout State) -> PendingWrite {
    var job = job
    state.lastOrdinal += 1
    job.ordinal = state.lastOrdinal
    state.inLine = job.ordinal
    return job
  }

  func takePending() -> PendingWrite? {
    let (job, timer) = state.withLock { state in
      defer {
        state.pending = nil
        state.trailingTimer = nil
      }
      return (state.pending.map { Self.numbered($0, in: &state) }, state.trailingTimer)
    }
    timer?.cancel()
    return job
  }

  /// Writes one job, holding the file's lock (see `withFileLock`). Runs on the queue.
  ///
  /// A `.didSet` job (one with a `base`) yields to a change someone else made since its holders
  /// last saw the file: their change wins, reaches the holders, and the job fails with
  /// ``FileStorageKeyError/conflict(url:)``. Any write first moves aside a file that does not
  /// decode, so its bytes are never lost.
  func perform(_ job: PendingWrite) {
    let base = job.base.map(resolve)
    let outcome = withFileLock { target -> Result<Void, FileStorageKeyError>? in
      let current = FileSystem.stat(path)
      if let base, isConflict(base: base, current: current, job: job) { return nil }
      return write(job, current: current, target: target)
    }
    let leaves: Base
    switch outcome {
    case .success(.success?): leaves = .version(state.withLock { $0.disk })
    case .success(nil): leaves = .conflicted
    default: leaves = base ?? .version(state.withLock { $0.seen })
    }
    state.withLock { state in
      state.lastPerformed = (job.ordinal, leaves)
      if state.inLine == job.ordinal { state.inLine = nil }
    }
    switch outcome {
    case .success(nil):
      // Outside the lock: delivering calls out to holders.
      deliverCurrentFile()
      let conflict = FileStorageKeyError.conflict(url: url)
      job.continuations.forEach { $0.resume(throwing: conflict) }
    case .success(.success?):
      job.continuations.forEach { $0.resume() }
    case .success(.failure(let error)?), .failure(let error):
      job.continuations.forEach { $0.resume(throwing: error) }
    }
  }

  /// The version a job's base stands for, now that every job before it has been performed.
  private func resolve(_ base: Base) -> Base {
    guard case .afterJob(let ordinal) = base else { return base }
    return state.withLock { state in
      guard let last = state.lastPerformed, last.ordinal == ordinal else {
        return .version(state.seen)
      }
      return last.leaves
    }
  }

  /// Whether the file is no longer the version `base` a `.didSet` save was made from: another
  /// process wrote (or deleted) it since. The same bytes under a new identity (a touch, or an
  /// identical write) are no conflict. Runs on the queue, under the file's lock.
  private func isConflict(base: Base, current: FileStat?, job: PendingWrite) -> Bool {
    guard case .version(let version) = base else { return base == .conflicted }
    if version == .unknown || Self.matches(version, current) { return false }
    guard case .present(_, let fingerprint) = version, current != nil,
      let (data, _) = try? FileSystem.read(path, maximumSize: job.options.maximumSize)
    else { return true }
    return Fingerprint(data) != fingerprint
  }

  /// Encodes and writes a job's value over whatever is there, moving undecodable bytes aside
  /// first. Runs on the queue, under the file's lock.
  private func write(
    _ job: PendingWrite, current: FileStat?, target: String
  ) -> Result<Void, FileStorageKeyError> {
    let known = state.withLock { $0.disk }
    var mayHoldUndecodableBytes = false
    if case .corrupt = known {
      mayHoldUndecodableBytes = true
    } else if !Self.matches(known, current) {
      mayHoldUndecodableBytes = true
    }
    if mayHoldUndecodableBytes, let current {
      moveAsideIfUndecodable(current, job: job)
    }
    let data: Data
    do {
      data = try job.encode()
    } catch {
      return .failure(.encodingFailed(url: url, underlying: error))
    }
    return writeBytes(data, to: target, permissions: job.options.permissions)
  }

  /// Writes `data` atomically and records it as the version on disk and in the holders.
  /// Writes `data` atomically to `target`, the file's path with symbolic links resolved under
  /// the file's lock (`withFileLock`), and records the new version.
  func writeBytes(
    _ data: Data, to target: String, permissions: mode_t
  ) -> Result<Void, FileStorageKeyError> {
    do throws(FileSystemError) {
      defer { state.withLock { $0.renaming = nil } }
      let identity = try FileSystem.writeAtomically(
        data, toResolved: target, permissions: permissions
      ) { identity in state.withLock { $0.renaming = identity } }
      state.withLock { state in
        state.disk = .present(identity, Fingerprint(data))
        state.seen = state.disk
        state.writeCount += 1
      }
      return .success(())
    } catch {
      return .failure(writeError(error))
    }
  }

  /// Runs `body` holding the file's lock (``FileLock``) on the sidecar file
  /// `.NAME.tether-lock` next to the file (next to the target of a symbolic link), waiting for
  /// another process to release it. Runs on the queue.
  ///
  /// - Returns: `body`'s result, or the error that kept the lock from being taken (only when
  ///   the lock file cannot be created, in which case the write itself could not happen).
  func withFileLock<T>(_ body: (_ target: String) -> T) -> Result<T, FileStorageKeyError> {
    // Waiting never ends in `busy`.
    lockingFile(waiting: true, body) ?? .failure(.writeFailed(url: url, errno: EAGAIN))
  }

  /// Like `withFileLock`, without waiting: `nil` when another holder has the lock.
  func withFileLockIfFree<T>(_ body: (_ target: String) -> T) -> Result<T, FileStorageKeyError>? {
    lockingFile(waiting: false, body)
  }

  private func lockingFile<T>(
    waiting: Bool, _ body: (_ target: String) -> T
  ) -> Result<T, FileStorageKeyError>? {
    let target: String
    let lockPath: String
    do throws(FileSystemError) {
      target = try FileSystem.resolveSymbolicLinks(path)
      try FileSystem.createDirectories(FileSystem.split(target).directory)
      lockPath = FileSystem.lockPath(of: target)
    } catch {
      return .failure(writeError(error))
    }
    switch fileLock.withLock(at: lockPath, waiting: waiting, { body(target) }) {
    case .locked(let result): return .success(result)
    case .busy: return nil
    case .failed(let code): return .failure(.writeFailed(url: url, errno: code))
    }
  }

  /// Moves the file aside if the writing key could not read it back (it does not decode, or
  /// it is above the key's size cap), so the write about to replace it loses nothing.
  private func moveAsideIfUndecodable(_ current: FileStat, job: PendingWrite) {
    do throws(FileSystemError) {
      if let (data, identity) = try FileSystem.read(path, maximumSize: job.options.maximumSize),
        !data.isEmpty, !job.decodes(data)
      {
        _ = FileSystem.moveAside(path, expected: identity)
      }
    } catch {
      // Too large to read: keep the bytes all the same. (Anything else: the write reports it.)
      if error.oversize != nil { _ = FileSystem.moveAside(path, expected: current) }
    }
  }
}
