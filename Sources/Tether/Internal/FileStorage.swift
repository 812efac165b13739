import Foundation
import Synchronization

/// The engine behind every `FileStorageKey` for one path: throttles and performs writes,
/// watches the file, and tells subscribers about changes made by anyone else.
///
/// There is one per path per process, whatever the key's value type, so every write to a
/// file from this process goes through one serial queue, in the order saves arrive. All disk
/// I/O (and the encoding before it) happens on that queue, never on a caller's thread,
/// except `load`, which is synchronous by contract, and an `update` of an idle file, which
/// runs inside `queue.sync` on its caller's thread (see `update`).
///
/// How it tells its own writes from others': after each write or read it records the file's
/// identity (`FileStat`) and a fingerprint of its bytes; a watcher event that finds the same
/// identity, or the same bytes, is not a change.
final class FileStorage: Sendable {
  /// How a subscribed key turns bytes into a value, and where it reports changes.
  struct Subscriber: Sendable {
    /// The most bytes the subscribed key reads (``FileStorageKey/maximumFileSize``).
    let maximumSize: Int
    /// Decodes `data`, returning how to deliver the value, or throws the decoding error.
    let prepare: @Sendable (Data) throws -> @Sendable () -> Void
    /// Reports that the file is gone (or empty).
    let deleted: @Sendable () -> Void
    /// Reports a failure.
    let failed: @Sendable (any Error) -> Void
    /// The subscribing reference's count of changes delivered to it (see `SaveBasis`).
    var changes: ExternalChanges? = nil
  }

  /// What this process last knew to be on disk.
  private enum Disk: Equatable {
    case unknown
    case absent
    case present(FileStat, Fingerprint)
    /// A file that did not decode when seen while watching. It stays where it is (its writer
    /// may not be finished with it) until this process is about to overwrite it.
    case corrupt(FileStat)
  }

  /// A save waiting for its turn: the newest value of a throttle window.
  private struct PendingWrite {
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
  private enum Base: Equatable {
    /// The version the holders had: nothing of this process was waiting to be written.
    case version(Disk)
    /// Whatever the job with this ordinal, enqueued before and not yet written, leaves: the
    /// value builds on that job's value.
    case afterJob(UInt64)
    /// The value builds on a save that lost to another process's change.
    case conflicted
  }

  /// What a key asks of the files it writes and reads.
  struct WriteOptions: Sendable {
    /// The mode of a new file, before the umask (an existing file keeps its own).
    var permissions: mode_t
    /// The most bytes the key reads; a larger file is moved aside before it is replaced.
    var maximumSize: Int
  }

  private struct State {
    var disk = Disk.unknown
    /// The version of the file the holders were last given (loaded, written by this process,
    /// or delivered after another process changed it): what a `.didSet` save is based on.
    var seen = Disk.unknown
    /// The sidecar lock file, open while the storage lives (only used on the queue).
    var lockDescriptor: Int32?
    /// The ordinal of the last job enqueued.
    var lastOrdinal: UInt64 = 0
    /// The ordinal of the newest job enqueued and not performed yet, if any.
    var inLine: UInt64?
    /// The last job performed and the version it left for a save that builds on it.
    var lastPerformed: (ordinal: UInt64, leaves: Base)?
    var lastWrite: Duration?
    var pending: PendingWrite?
    var trailingTimer: FileTimer?
    var subscribers: [UInt64: Subscriber] = [:]
    var nextSubscriberID: UInt64 = 0
    var watches: [FileWatcher.Watch] = []
    var refreshScheduled = false
    /// The identity of the file this process is renaming into place, from just before the
    /// rename until `disk` records it: the watcher may report the rename in between.
    var renaming: FileStat?
    var writeCount = 0
    /// Whether holders were told that the system refused to watch the file.
    var reportedUnwatchable = false
    /// Per subscribing reference (its `ExternalChanges`), the version the holders had before
    /// each of the last deliveries: change `n` was delivered over `before[id][n]`.
    var before: [ObjectIdentifier: [UInt64: Disk]] = [:]
  }

  /// How many deliveries back a save's basis is resolved; an older one is a conflict.
  private static let basisHistory: UInt64 = 64

  let url: URL
  let path: String
  private let queue: DispatchQueue
  private let state = Lock(State())
  /// How many jobs were handed to the queue and have not finished: zero means an update can
  /// run at once on its caller's thread.
  private let backlog = Atomic<Int>(0)
  private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

  private init(path: String) {
    self.path = path
    self.url = URL(fileURLWithPath: path)
    queue = DispatchQueue(label: "tether.file-storage")
    queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
  }

  // MARK: - One storage per path

  /// A registry entry: weak, so a path no key uses any more is forgotten (its storage goes
  /// away with the last key; nothing is kept per path for the life of the process).
  private struct Entry {
    weak var storage: FileStorage?
  }

  private static let registry = Lock<[String: Entry]>([:])

  /// The directories whose abandoned temporary files were already removed, so a new key in a
  /// directory another key scanned does not list it again (10,000 keys in a populated
  /// directory would otherwise list it 10,000 times). One entry per directory, cleared if it
  /// ever grows past `scannedDirectoryLimit` (a rescan is only slower, never wrong).
  private static let scannedDirectories = Lock<[String: Int]>([:])
  private static let scannedDirectoryLimit = 4_096

  /// How old a temporary file must be before it counts as abandoned by a killed writer.
  static let abandonedTemporaryFileAge = Duration.seconds(300)

  /// Flushes every pending write at normal process exit; registered on first use.
  private static let exitFlush: Void = { atexit { FileStorage.flushAll() } }()

  /// The storage for `path`, an absolute, normalized path.
  ///
  /// The first time this process touches a directory, the new storage's queue first removes
  /// temporary files that writers killed mid-write left in it (ones older than
  /// ``abandonedTemporaryFileAge``), before any load or write.
  static func at(_ path: String) -> FileStorage {
    let (storage, isNew) = registry.withLock { storages in
      if let existing = storages[path]?.storage { return (existing, false) }
      let storage = FileStorage(path: path)
      storages[path] = Entry(storage: storage)
      return (storage, true)
    }
    _ = exitFlush
    guard isNew else { return storage }
    let directory = storage.url.deletingLastPathComponent().path
    let needsScan = scannedDirectories.withLock { scanned in
      guard scanned[directory] == nil else { return false }
      if scanned.count >= scannedDirectoryLimit { scanned.removeAll() }
      scanned[directory] = 1
      return true
    }
    if needsScan {
      storage.async {
        FileSystem.removeAbandonedTemporaryFiles(
          in: directory, olderThan: abandonedTemporaryFileAge)
      }
    }
    return storage
  }

  deinit {
    if let descriptor = state.withLock({ $0.lockDescriptor }) { close(descriptor) }
    let path = self.path
    Self.registry.withLock { storages in
      // Another storage may already have taken the path since this one's last reference went.
      if storages[path]?.storage == nil { storages[path] = nil }
    }
  }

  /// Writes every pending save now and waits for all writes to finish: the last chance,
  /// at normal process exit.
  static func flushAll() {
    for storage in registry.withLock({ $0.values.compactMap(\.storage) }) {
      storage.flush()
      storage.waitForWrites()
    }
  }

  /// Whether this process keeps a storage for `path` (for tests: a path nobody uses is
  /// forgotten).
  static func isRegistered(_ path: String) -> Bool {
    registry.withLock { $0[path] != nil }
  }

  /// How many times this process listed `directory` for abandoned temporary files since the
  /// bookkeeping was last cleared (for tests: at most once).
  static func scanCount(of directory: String) -> Int {
    scannedDirectories.withLock { $0[directory] ?? 0 }
  }

  /// How many times this process has written the file (for tests and benchmarks).
  var writeCount: Int { state.withLock { $0.writeCount } }

  // MARK: - Loading

  /// Reads and decodes the file on the storage queue, waiting for it. A missing or empty
  /// file is `nil`. A file that does not decode is moved aside and reported as
  /// ``FileStorageKeyError/decodingFailed(url:preservedAt:underlying:)``; one above
  /// `maximumSize`, or something other than a regular file, fails and is left in place.
  ///
  /// With `flushingPending`, a pending throttled write is written first, so the result is
  /// the newest value this process saved.
  func load<Value>(
    flushingPending: Bool, maximumSize: Int, decode: @Sendable (Data) throws -> Value
  ) -> Result<Value?, any Error> {
    onQueue {
      if flushingPending, let job = takePending() { perform(job) }
      // A change not reported yet goes to every subscriber first (other scopes may hold
      // this file too); this load's bookkeeping below would otherwise hide it from them.
      if state.withLock({ $0.disk }) != .unknown { refresh() }
      let contents: (Data, FileStat)?
      do throws(FileSystemError) {
        contents = try FileSystem.read(path, maximumSize: maximumSize)
      } catch {
        return .failure(readError(error, limit: maximumSize))
      }
      guard let (data, identity) = contents else {
        record(.absent)
        return .success(nil)
      }
      switch FileContents.interpret(data, maximumSize: maximumSize, decode: decode) {
      case .empty:
        record(.present(identity, Fingerprint(data)))
        return .success(nil)
      case .value(let value):
        record(.present(identity, Fingerprint(data)))
        return .success(value)
      case .tooLarge(let size):
        return .failure(FileStorageKeyError.fileTooLarge(url: url, size: size, limit: maximumSize))
      case .undecodable(let error):
        return .failure(quarantine(identity, underlying: error))
      }
    }
  }

  /// Records what is on disk now, as the version the holders have too.
  private func record(_ disk: Disk) {
    state.withLock { state in
      state.disk = disk
      state.seen = disk
    }
  }

  /// The typed error for a failed read.
  private func readError(_ error: FileSystemError, limit: Int) -> FileStorageKeyError {
    if let kind = error.nonRegularKind { return .notARegularFile(url: url, kind: kind) }
    if let size = error.oversize { return .fileTooLarge(url: url, size: size, limit: limit) }
    return .readFailed(url: url, errno: error.code)
  }

  /// The typed error for a failed write.
  private func writeError(_ error: FileSystemError) -> FileStorageKeyError {
    if let kind = error.nonRegularKind { return .notARegularFile(url: url, kind: kind) }
    return .writeFailed(url: url, errno: error.code)
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
      state -> (FileTimer?, [SaveContinuation]) in
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
    let timer: FileTimer? = state.withLock { state in
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
  private static func base(for state: State, basis: SaveBasis?) -> Base {
    guard let basis, basis.isStale else { return base(for: state) }
    let first = basis.applied + 1
    guard let version = state.before[ObjectIdentifier(basis.changes)]?[first] else {
      return .conflicted
    }
    return .version(version)
  }

  /// What a save made now is based on: the pending save it replaces, the job in line before
  /// it, or the version the holders have.
  private static func base(for state: State) -> Base {
    if let pending = state.pending, let base = pending.base { return base }
    if let job = state.inLine { return .afterJob(job) }
    return .version(state.seen)
  }

  /// Must be called with the state locked, so writes reach the queue in decision order.
  /// (`async` only enqueues: nothing is called out under the lock.)
  private func enqueue(_ job: PendingWrite, in state: inout State) {
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

  private func takePending() -> PendingWrite? {
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
  private func perform(_ job: PendingWrite) {
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
  private func writeBytes(
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

  // MARK: - Atomic updates

  /// Applies `transform` to the value stored in the file, atomically with respect to every
  /// writer of the file in any process, and writes the result; `completion` gets the stored
  /// value.
  ///
  /// When nothing of this file is waiting on its queue, the update runs at once on the
  /// calling thread (inside `queue.sync`, so the queue's jobs stay serial): the disk wait is
  /// one write, and the thread hops to the queue and back would add about a tenth to it. It
  /// runs on the queue instead, returning at once, when jobs are waiting there, when called
  /// from the queue, and on the main thread, which never waits for the disk.
  ///
  /// Holding the file's lock from the read to the rename is what makes it atomic: every write
  /// of a file key, in every process, takes the same lock. A pending throttled save of this
  /// process is written (with its conflict check) first, so an update never hides it.
  /// Nothing stored (a missing or empty file) is `initialValue`. A file that does not decode
  /// is moved aside and the update fails, as a load would; so does a file above the size cap.
  func update<Value: Sendable>(
    initialValue: Value, options: WriteOptions,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data,
    transform: @escaping @Sendable (inout Value) throws -> Void,
    completion: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    let run: @Sendable () -> Void = {
      if let job = self.takePending() { self.perform(job) }
      let outcome = self.withFileLock { target -> Result<Value, any Error> in
        let contents: (Data, FileStat)?
        do throws(FileSystemError) {
          contents = try FileSystem.read(self.path, maximumSize: options.maximumSize)
        } catch {
          return .failure(self.readError(error, limit: options.maximumSize))
        }
        var value = initialValue
        if let (data, identity) = contents {
          switch FileContents.interpret(data, maximumSize: options.maximumSize, decode: decode) {
          case .empty: break
          case .value(let stored): value = stored
          case .tooLarge(let size):
            return .failure(
              FileStorageKeyError.fileTooLarge(
                url: self.url, size: size, limit: options.maximumSize))
          case .undecodable(let error):
            return .failure(self.quarantine(identity, underlying: error))
          }
        }
        do {
          try transform(&value)
        } catch {
          return .failure(error)
        }
        let data: Data
        do {
          data = try encode(value)
        } catch {
          return .failure(FileStorageKeyError.encodingFailed(url: self.url, underlying: error))
        }
        return self.writeBytes(data, to: target, permissions: options.permissions)
          .map { value }.mapError { $0 as any Error }
      }
      completion(outcome.mapError { $0 as any Error }.flatMap { $0 })
    }
    if backlog.load(ordering: .acquiring) == 0, !Thread.isMainThread,
      DispatchQueue.getSpecific(key: Self.queueKey) != ObjectIdentifier(self)
    {
      queue.sync(execute: run)
    } else {
      async(run)
    }
  }

  // MARK: - The file's lock

  /// Runs `body` holding an exclusive advisory lock (`flock`) on the sidecar file
  /// `.NAME.tether-lock` next to the file (next to the target of a symbolic link), which every
  /// write of a file key takes, in every process. Runs on the queue.
  ///
  /// The kernel releases the lock when its holder dies, so a crashed process never blocks the
  /// others. The lock file is never deleted: a process that deleted it while another waited
  /// for it would let a third lock a new file. If it was deleted or replaced anyway, the lock
  /// taken on the old one is dropped and taken again on the new one.
  ///
  /// - Returns: `body`'s result, or the error that kept the lock from being taken (only when
  ///   the lock file cannot be created, in which case the write itself could not happen).
  private func withFileLock<T>(_ body: (_ target: String) -> T) -> Result<T, FileStorageKeyError> {
    let target: String
    let lockPath: String
    do throws(FileSystemError) {
      target = try FileSystem.resolveSymbolicLinks(path)
      try FileSystem.createDirectories(FileSystem.split(target).directory)
      lockPath = FileSystem.lockPath(of: target)
    } catch {
      return .failure(writeError(error))
    }
    for _ in 0..<100 {
      var descriptor = state.withLock { $0.lockDescriptor } ?? -1
      if descriptor < 0 {
        descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        // A lock file another user created read-only still locks: flock needs no write access.
        if descriptor < 0 && errno == EACCES { descriptor = open(lockPath, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return .failure(.writeFailed(url: url, errno: errno)) }
        state.withLock { $0.lockDescriptor = descriptor }
      }
      while flock(descriptor, LOCK_EX) != 0 {
        guard errno == EINTR else { return .failure(.writeFailed(url: url, errno: errno)) }
      }
      var locked = Foundation.stat()
      var named = Foundation.stat()
      if fstat(descriptor, &locked) == 0, stat(lockPath, &named) == 0,
        locked.st_ino == named.st_ino, locked.st_dev == named.st_dev
      {
        defer { flock(descriptor, LOCK_UN) }
        return .success(body(target))
      }
      // The lock file was deleted or replaced since it was opened: lock the one there now.
      close(descriptor)
      state.withLock { $0.lockDescriptor = nil }
    }
    return .failure(.writeFailed(url: url, errno: EAGAIN))
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

  private static func matches(_ known: Disk, _ current: FileStat?) -> Bool {
    switch (known, current) {
    case (.absent, nil): return true
    case (.present(let identity, _), let current?): return identity == current
    case (.corrupt(let identity), let current?): return identity == current
    default: return false
    }
  }

  // MARK: - Watching

  /// Adds a subscriber; the file is watched while there is at least one.
  ///
  /// - Returns: A closure that removes the subscriber and writes any pending save.
  func subscribe(_ subscriber: Subscriber) -> @Sendable () -> Void {
    let (id, needsWatch) = state.withLock { state in
      state.nextSubscriberID += 1
      state.subscribers[state.nextSubscriberID] = subscriber
      return (state.nextSubscriberID, state.watches.isEmpty)
    }
    if needsWatch {
      let watches = watchPaths().map { watched in
        FileWatcher.shared.watch(watched) { [weak self] change in
          switch change {
          case .created: break  // Empty until its writer closes it; wait for that.
          case .unwatchable(let code): self?.reportUnwatchable(errno: code)
          default: self?.fileChanged()
          }
        }
      }
      let unused = state.withLock { state -> [FileWatcher.Watch] in
        guard state.watches.isEmpty, !state.subscribers.isEmpty else { return watches }
        state.watches = watches
        return []
      }
      unused.forEach { $0.cancel() }
    }
    // The file may have changed between the load and the watch starting.
    scheduleRefresh()
    // Strong: a live subscription keeps its storage (and the watch) alive even when no key does.
    return { self.unsubscribe(id) }
  }

  /// The path, and the file at the end of a symbolic link there: a process writing through
  /// the link (as this one does) changes the target's directory, not the link's.
  private func watchPaths() -> [String] {
    guard let target = try? FileSystem.resolveSymbolicLinks(path), target != path else {
      return [path]
    }
    return [path, target]
  }

  /// The system refused to watch the file: tell every holder once (in `loadError`) and this
  /// process's standard error once, and look now; the watcher checks periodically from here.
  private func reportUnwatchable(errno code: Int32) {
    let subscribers = state.withLock { state -> [Subscriber] in
      guard !state.reportedUnwatchable else { return [] }
      state.reportedUnwatchable = true
      return Array(state.subscribers.values)
    }
    let error = FileStorageKeyError.watchUnavailable(
      url: url, errno: code, checkingEvery: FileWatcher.fallbackInterval)
    if !subscribers.isEmpty { Self.reportToStandardErrorOnce(error) }
    subscribers.forEach { $0.failed(error) }
    scheduleRefresh()
  }

  private static let reportedToStandardError = Atomic<Bool>(false)

  private static func reportToStandardErrorOnce(_ error: FileStorageKeyError) {
    guard !reportedToStandardError.exchange(true, ordering: .relaxed) else { return }
    let advice = "raise fs.inotify.max_user_watches; reported once per process"
    FileHandle.standardError.write(Data("Tether: \(error) (\(advice))\n".utf8))
  }

  private func unsubscribe(_ id: UInt64) {
    let watches = state.withLock { state -> [FileWatcher.Watch] in
      if let changes = state.subscribers[id]?.changes {
        state.before[ObjectIdentifier(changes)] = nil
      }
      state.subscribers[id] = nil
      guard state.subscribers.isEmpty else { return [] }
      defer {
        state.watches = []
        state.reportedUnwatchable = false
      }
      return state.watches
    }
    watches.forEach { $0.cancel() }
    flush()
  }

  /// The watcher saw the file change: look at it on the queue, unless it is the version this
  /// process already knows (its own write, most often). Whatever comes after that version
  /// brings its own event.
  private func fileChanged() {
    let (known, renaming) = state.withLock { ($0.disk, $0.renaming) }
    let current = FileSystem.stat(path)
    if known != .unknown, Self.matches(known, current) { return }
    if let renaming, current == renaming { return }
    scheduleRefresh()
  }

  private func scheduleRefresh() {
    state.withLock { state in
      guard !state.refreshScheduled else { return }
      state.refreshScheduled = true
      async { _ = self.refresh() }
    }
  }

  /// Looks at the file and, if someone else changed it, cancels any pending write (their
  /// change wins) and tells every subscriber. Runs on the queue.
  ///
  /// - Returns: Whether the file had changed.
  @discardableResult
  private func refresh() -> Bool {
    let known = state.withLock { state in
      state.refreshScheduled = false
      return state.disk
    }
    if Self.matches(known, FileSystem.stat(path)) { return false }
    let listeners = state.withLock { Array($0.subscribers.values) }
    let maximumSize = listeners.map(\.maximumSize).max() ?? FileStorageKeyDefaults.maximumFileSize
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path, maximumSize: maximumSize)
    } catch {
      let failure = readError(error, limit: maximumSize)
      listeners.forEach { $0.failed(failure) }
      return false
    }
    let disk: Disk = contents.map { .present($0.1, Fingerprint($0.0)) } ?? .absent
    if known == .unknown {
      // Nothing was loaded before the watch started: this is the baseline, not a change.
      record(disk)
      return false
    }
    if case .present(_, let old) = known, case .present(_, let new) = disk, old == new {
      // Same bytes, new identity (touched, or rewritten): the holders have this version.
      state.withLock { state in
        if state.seen == known { state.seen = disk }
        state.disk = disk
      }
      return false
    }
    deliver(contents, disk: disk)
    return true
  }

  /// Tells every holder what the file holds now, whatever they have: after a conflict, the
  /// holders must end up with the file's value even when this process had already seen it.
  private func deliverCurrentFile() {
    let maximumSize =
      state.withLock { $0.subscribers.values.map(\.maximumSize).max() }
      ?? FileStorageKeyDefaults.maximumFileSize
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path, maximumSize: maximumSize)
    } catch {
      let failure = readError(error, limit: maximumSize)
      state.withLock { Array($0.subscribers.values) }.forEach { $0.failed(failure) }
      return
    }
    let disk: Disk = contents.map { .present($0.1, Fingerprint($0.0)) } ?? .absent
    deliver(contents, disk: disk)
  }

  /// Records `disk`, drops any pending save (the file's version wins over it) and hands the
  /// contents to every subscriber. Runs on the queue.
  ///
  /// Saves are judged against `seen`, which moves to the new version just before the holders
  /// are told (after decoding, so the two are microseconds apart): a holder that reacts to the
  /// change saves against the new version, never as a false conflict. A mutation made from
  /// the old value whose save reaches the storage only after that point (its thread stalled
  /// between `withLock` and the save while the change was delivered) is told apart by its
  /// basis: each subscriber's `ExternalChanges` is counted before `seen` moves, and the
  /// reference counts the change in the critical section that applies it.
  private func deliver(_ contents: (Data, FileStat)?, disk: Disk) {
    let (subscribers, superseded, timer) = state.withLock { state in
      state.disk = disk
      defer {
        state.pending = nil
        state.trailingTimer = nil
      }
      return (Array(state.subscribers.values), state.pending, state.trailingTimer)
    }
    timer?.cancel()
    // The external change wins over saves still waiting for their window.
    let conflict = FileStorageKeyError.conflict(url: url)
    superseded?.continuations.forEach { $0.resume(throwing: conflict) }
    guard let (data, identity) = contents, !data.isEmpty else {
      state.withLock { state in
        Self.beginDeliveries(to: subscribers.map(\.changes), in: &state)
        state.seen = state.disk
      }
      subscribers.forEach { $0.deleted() }
      return
    }
    // Decode for everyone first, so telling the holders takes as little time as possible.
    var actions: [@Sendable () -> Void] = []
    var starting: [ExternalChanges?] = []
    for subscriber in subscribers {
      switch FileContents.interpret(
        data, maximumSize: subscriber.maximumSize, decode: subscriber.prepare)
      {
      case .value(let deliver):
        starting.append(subscriber.changes)
        actions.append(deliver)
      case .empty:
        starting.append(subscriber.changes)
        actions.append(subscriber.deleted)
      case .tooLarge(let size):
        let error = FileStorageKeyError.fileTooLarge(
          url: url, size: size, limit: subscriber.maximumSize)
        actions.append { subscriber.failed(error) }
      case .undecodable(let error):
        // Not moved aside yet: another process may be in the middle of writing it in place.
        // The next write from this process moves it aside first.
        state.withLock { $0.disk = .corrupt(identity) }
        let failure = FileStorageKeyError.decodingFailed(
          url: url, preservedAt: nil, underlying: error)
        actions.append { subscriber.failed(failure) }
      }
    }
    state.withLock { state in
      Self.beginDeliveries(to: starting, in: &state)
      state.seen = state.disk
    }
    actions.forEach { $0() }
  }

  /// Counts a delivery to each reference and remembers the version its holders had before
  /// it, in the critical section that moves `seen`: a save made before the reference applies
  /// the change is judged against that version, one made after against the new one.
  private static func beginDeliveries(to references: [ExternalChanges?], in state: inout State) {
    for case let changes? in references {
      let count = changes.begin()
      let id = ObjectIdentifier(changes)
      state.before[id, default: [:]][count] = state.seen
      if count > basisHistory { state.before[id]?[count - basisHistory] = nil }
    }
  }

  /// Moves an undecodable file aside and records that nothing is there now. Runs on the
  /// queue.
  private func quarantine(_ identity: FileStat, underlying: any Error) -> FileStorageKeyError {
    let preserved = FileSystem.moveAside(path, expected: identity)
    if preserved != nil { state.withLock { $0.disk = .absent } }
    return .decodingFailed(url: url, preservedAt: preserved, underlying: underlying)
  }

  /// Runs `body` on the queue and waits for it; runs it directly when already there (a
  /// subscriber that loads while being told about a change must not deadlock).
  /// Runs `body` on the queue later, counted in `backlog` until it has run.
  private func async(_ body: @escaping @Sendable () -> Void) {
    backlog.add(1, ordering: .relaxed)
    queue.async {
      body()
      self.backlog.subtract(1, ordering: .releasing)
    }
  }

  private func onQueue<T>(_ body: () -> T) -> T {
    if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
      return body()
    }
    return queue.sync(execute: body)
  }
}
