import Foundation
import Synchronization

/// The engine behind every `FileStorageKey` for one path: throttles and performs writes,
/// watches the file, and tells subscribers about changes made by anyone else.
///
/// There is one per path per process, whatever the key's value type, so every write to a
/// file from this process goes through one serial queue, in the order saves arrive. All disk
/// I/O (and the encoding before it) happens on that queue, never on a caller's thread,
/// except `load`, which is synchronous by contract.
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
    var lastWrite: Duration?
    var pending: PendingWrite?
    var trailingTimer: FileTimer?
    var subscribers: [UInt64: Subscriber] = [:]
    var nextSubscriberID: UInt64 = 0
    var watches: [FileWatcher.Watch] = []
    var refreshScheduled = false
    var writeCount = 0
    /// Whether holders were told that the system refused to watch the file.
    var reportedUnwatchable = false
  }

  let url: URL
  let path: String
  private let queue: DispatchQueue
  private let state = Lock(State())
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
      storage.queue.async {
        FileSystem.removeAbandonedTemporaryFiles(
          in: directory, olderThan: abandonedTemporaryFileAge)
      }
    }
    return storage
  }

  deinit {
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
      if flushingPending, let job = takePending() { perform(job, throttled: true) }
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
        state.withLock { $0.disk = .absent }
        return .success(nil)
      }
      switch FileContents.interpret(data, maximumSize: maximumSize, decode: decode) {
      case .empty:
        state.withLock { $0.disk = .present(identity, Fingerprint(data)) }
        return .success(nil)
      case .value(let value):
        state.withLock { $0.disk = .present(identity, Fingerprint(data)) }
        return .success(value)
      case .tooLarge(let size):
        return .failure(FileStorageKeyError.fileTooLarge(url: url, size: size, limit: maximumSize))
      case .undecodable(let error):
        return .failure(quarantine(identity, underlying: error))
      }
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
      if immediate {
        var continuations = state.pending?.continuations ?? []
        continuations.append(continuation)
        let job = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: continuations)
        state.pending = nil
        state.lastWrite = now
        enqueue(job, throttled: false)
        defer { state.trailingTimer = nil }
        return (state.trailingTimer, [])
      }
      if let pending = state.pending {
        // The newer value replaces the pending one, which will never be written: its save
        // is complete. (Resuming it now also keeps memory flat under a mutation storm.)
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation])
        return (nil, pending.continuations)
      }
      if let lastWrite = state.lastWrite, now - lastWrite < window {
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation])
        // Strong: a pending write keeps its storage (and so its path) until it is written.
        state.trailingTimer = clock.schedule(after: lastWrite + window - now) {
          self.writeTrailing(clock: clock)
        }
        return (nil, [])
      }
      state.lastWrite = now
      enqueue(
        PendingWrite(
          encode: encode, decodes: decodes, options: options, continuations: [continuation]),
        throttled: true)
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
      enqueue(pending, throttled: true)
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
      enqueue(pending, throttled: true)
    }
  }

  /// Must be called with the state locked, so writes reach the queue in decision order.
  /// (`async` only enqueues: nothing is called out under the lock.)
  private func enqueue(_ job: PendingWrite, throttled: Bool) {
    queue.async { self.perform(job, throttled: throttled) }
  }

  private func takePending() -> PendingWrite? {
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

  /// Writes one job. Runs on the queue.
  ///
  /// A `throttled` write yields to a change someone else made since this process last looked
  /// at the file: their change wins and the job is dropped. Any write first moves aside a
  /// file that does not decode, so its bytes are never lost.
  private func perform(_ job: PendingWrite, throttled: Bool) {
    let known = state.withLock { $0.disk }
    let current = FileSystem.stat(path)
    var mayHoldUndecodableBytes = false
    if case .corrupt = known {
      mayHoldUndecodableBytes = true
    } else if !Self.matches(known, current) {
      if throttled && known != .unknown && refresh() {
        job.continuations.forEach { $0.resume() }
        return
      }
      mayHoldUndecodableBytes = true
    }
    if mayHoldUndecodableBytes, let current {
      moveAsideIfUndecodable(current, job: job)
    }
    let data: Data
    do {
      data = try job.encode()
    } catch {
      let failure = FileStorageKeyError.encodingFailed(url: url, underlying: error)
      job.continuations.forEach { $0.resume(throwing: failure) }
      return
    }
    do throws(FileSystemError) {
      let identity = try FileSystem.writeAtomically(
        data, to: path, permissions: job.options.permissions)
      state.withLock { state in
        state.disk = .present(identity, Fingerprint(data))
        state.writeCount += 1
      }
      job.continuations.forEach { $0.resume() }
    } catch {
      let failure = writeError(error)
      job.continuations.forEach { $0.resume(throwing: failure) }
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
          default: self?.scheduleRefresh()
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
    return { [weak self] in self?.unsubscribe(id) }
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

  private func scheduleRefresh() {
    state.withLock { state in
      guard !state.refreshScheduled else { return }
      state.refreshScheduled = true
      queue.async { _ = self.refresh() }
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
      state.withLock { $0.disk = disk }
      return false
    }
    if case .present(_, let old) = known, case .present(_, let new) = disk, old == new {
      state.withLock { $0.disk = disk }  // Same bytes, new identity (touched, or rewritten).
      return false
    }
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
    superseded?.continuations.forEach { $0.resume() }
    guard let (data, identity) = contents, !data.isEmpty else {
      subscribers.forEach { $0.deleted() }
      return true
    }
    for subscriber in subscribers {
      switch FileContents.interpret(
        data, maximumSize: subscriber.maximumSize, decode: subscriber.prepare)
      {
      case .value(let deliver):
        deliver()
      case .empty:
        subscriber.deleted()
      case .tooLarge(let size):
        subscriber.failed(
          FileStorageKeyError.fileTooLarge(url: url, size: size, limit: subscriber.maximumSize))
      case .undecodable(let error):
        // Not moved aside yet: another process may be in the middle of writing it in place.
        // The next write from this process moves it aside first.
        state.withLock { $0.disk = .corrupt(identity) }
        subscriber.failed(
          FileStorageKeyError.decodingFailed(url: url, preservedAt: nil, underlying: error))
      }
    }
    return true
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
  private func onQueue<T>(_ body: () -> T) -> T {
    if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) {
      return body()
    }
    return queue.sync(execute: body)
  }
}
