import Foundation
import Synchronization

/// The throttled write queue of a ``FileStorage``: saves coalesce within the throttle window
/// and reach the storage's serial queue in the order they were decided. A `.didSet` save
/// carries the version of the file its value was derived from (`SaveContinuation.version`, captured
/// under the holders' lock when the body ran), so it never overwrites a change made by another
/// process that its holders had not seen.
extension FileStorage {
  /// A save waiting for its turn: the newest value of a throttle window.
  struct PendingWrite {
    var encode: @Sendable () throws -> Data
    var decodes: @Sendable (Data) -> Bool
    var options: WriteOptions
    var continuations: [SaveContinuation]
    var condition: Condition
  }

  /// What a write may replace.
  enum Condition: Equatable {
    /// Whatever is there: `save()`, and an update (which holds the lock from its read).
    case unconditional
    /// Only the version the value was derived from (`SaveContinuation.version`): the one the
    /// holders were given, or the one the holder's previous save resumed with (its reference
    /// keeps one save in flight, and its `VersionEngine` says which). `nil` when the holders
    /// were never given a version: then the newest version this process knows.
    case derivedFrom(SharedVersion?)
  }

  // MARK: - Saving

  /// Saves the bytes `encode` produces. Returns at once; `continuation` resumes after the
  /// write with the version written, or when a newer save replaces this one while both wait
  /// for the window (then without a version: its value was never written), or with a conflict
  /// when a change made by someone else wins over it.
  ///
  /// The first save after a quiet `window` is written at once; saves inside the window
  /// replace one pending trailing write, written when the window ends (or at once by `flush`,
  /// which a reference asks for when a `save()` waits behind it). An unconditional save
  /// (`save()`) writes at once, taking any pending save with it.
  func save(
    encode: @escaping @Sendable () throws -> Data,
    decodes: @escaping @Sendable (Data) -> Bool,
    options: WriteOptions,
    condition: Condition, window: Duration, clock: any FileStorageClock,
    continuation: SaveContinuation
  ) {
    let (timerToCancel, superseded) = state.withLock {
      state -> (CancelOnce?, [SaveContinuation]) in
      let now = clock.now
      if condition == .unconditional {
        var continuations = state.pending?.continuations ?? []
        continuations.append(continuation)
        let job = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: continuations,
          condition: .unconditional)
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
          condition: condition)
        return (nil, pending.continuations)
      }
      if let lastWrite = state.lastWrite, now - lastWrite < window {
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation],
          condition: condition)
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
          condition: condition), in: &state)
      return (nil, [])
    }
    timerToCancel?.cancel()
    superseded.forEach { $0.resume() }
  }

  /// Writes the pending save now, if there is one: when a holder goes away, at exit, and when a
  /// `save()` waits behind it (see `ThrottledSaveKey`).
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

  /// Must be called with the state locked, so writes reach the queue in decision order.
  /// (`async` only enqueues: nothing is called out under the lock.)
  func enqueue(_ job: PendingWrite, in state: inout State) {
    async { self.perform(job) }
  }

  func takePending() -> PendingWrite? {
    let (job, timer) = state.withLock { state in
      defer {
        state.pending = nil
        state.trailingTimer = nil
      }
      return (state.pending, state.trailingTimer)
    }
    timer?.cancel()
    return job
  }

  /// Writes one job, holding the file's lock (see `withFileLock`). Runs on the queue, so
  /// every job before it has been written and numbered.
  ///
  /// A `.didSet` job yields to a change someone else made since the version its value was
  /// derived from: their change reaches the holders first, then the job is refused with
  /// ``FileStorageKeyError/conflict(url:)``. Written, its own save resumes with the version it
  /// wrote (the holder's next save is conditional on it), and the saves it replaced resume
  /// without one. Any write first moves aside a file that does not decode, so its bytes are
  /// never lost.
  func perform(_ job: PendingWrite) {
    var condition: SharedVersion?
    if case .derivedFrom(let version) = job.condition {
      condition = version ?? state.withLock { $0.see($0.disk) }
    }
    let outcome = withFileLock { target -> Result<SharedVersion?, FileStorageKeyError>? in
      let current = FileSystem.stat(path)
      if let condition, isConflict(condition, current: current, job: job) { return nil }
      return write(job, current: current, target: target)
    }
    switch outcome {
    case .success(nil):
      // Outside the lock: delivering calls out to holders. Delivered before the refusal, so
      // that the holders' engine takes the file's value with it.
      deliverCurrentFile()
      let conflict = FileStorageKeyError.conflict(url: url)
      job.continuations.forEach { $0.resume(conflict: conflict) }
    case .success(.success(let written)?):
      job.continuations.dropLast().forEach { $0.resume() }
      if let written {
        job.continuations.last?.resume(version: written)
      } else {
        job.continuations.last?.resume()
      }
    case .success(.failure(let error)?), .failure(let error):
      job.continuations.forEach { $0.resume(throwing: error) }
    }
  }

  /// Whether the file is no longer `condition`, the version a `.didSet` save must find: another
  /// process wrote (or deleted) it since. The same bytes under a new identity (a touch, or an
  /// identical write) are no conflict, and neither is a file that does not decode, which this
  /// process reported to its holders and the write moves aside first. A version this storage
  /// does not remember is one. Runs on the queue, under the file's lock.
  private func isConflict(
    _ condition: SharedVersion, current: FileStat?, job: PendingWrite
  ) -> Bool {
    if condition == .absent {
      // Derived from nothing seen: only a missing or empty file is still that.
      return (current?.size ?? 0) > 0
    }
    let (version, known) = state.withLock { ($0.versions.state(of: condition), $0.disk) }
    guard let version else { return true }
    if version.matches(current) { return false }
    if let current, case .corrupt(let identity) = known, identity == current { return false }
    guard current != nil, version.fingerprint != nil,
      let (data, _) = try? FileSystem.read(path, maximumSize: job.options.maximumSize)
    else { return true }
    return FileVersion.text(of: Fingerprint(data)) != version.fingerprint
  }

  /// Encodes and writes a job's value over whatever is there, moving undecodable bytes aside
  /// first. Runs on the queue, under the file's lock.
  private func write(
    _ job: PendingWrite, current: FileStat?, target: String
  ) -> Result<SharedVersion?, FileStorageKeyError> {
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

  /// Writes `data` atomically to `target`, the file's path with symbolic links resolved under
  /// the file's lock (`withFileLock`), and returns the version written.
  func writeBytes(
    _ data: Data, to target: String, permissions: mode_t
  ) -> Result<SharedVersion?, FileStorageKeyError> {
    do throws(FileSystemError) {
      defer { state.withLock { $0.renaming = nil } }
      let identity = try FileSystem.writeAtomically(
        data, toResolved: target, permissions: permissions
      ) { identity in state.withLock { $0.renaming = identity } }
      let written = state.withLock { state in
        state.writeCount += 1
        return state.see(.present(identity, Fingerprint(data)))
      }
      return .success(written)
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
