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
    /// Decodes `data`, returning how to deliver the value, or the decoding error.
    let prepare: @Sendable (Data) -> Result<@Sendable () -> Void, any Error>
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
    var continuations: [SaveContinuation]
  }

  private struct State {
    var disk = Disk.unknown
    var lastWrite: Duration?
    var pending: PendingWrite?
    var trailingTimer: FileTimer?
    var subscribers: [UInt64: Subscriber] = [:]
    var nextSubscriberID: UInt64 = 0
    var watch: FileWatcher.Watch?
    var refreshScheduled = false
    var writeCount = 0
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

  private static let registry = Lock<[String: FileStorage]>([:])

  /// How old a temporary file must be before it counts as abandoned by a killed writer.
  static let abandonedTemporaryFileAge = Duration.seconds(300)

  /// The storage for `path`, an absolute, normalized path.
  ///
  /// The first time this process touches `path`, its queue first removes temporary files
  /// that writers killed mid-write left next to the file (ones older than
  /// ``abandonedTemporaryFileAge``), before any load or write.
  static func at(_ path: String) -> FileStorage {
    let (storage, isNew, isFirst) = registry.withLock { storages in
      if let existing = storages[path] { return (existing, false, false) }
      let storage = FileStorage(path: path)
      storages[path] = storage
      return (storage, true, storages.count == 1)
    }
    if isFirst { atexit { FileStorage.flushAll() } }
    if isNew {
      storage.queue.async {
        FileSystem.removeAbandonedTemporaryFiles(of: path, olderThan: abandonedTemporaryFileAge)
      }
    }
    return storage
  }

  /// Writes every pending save now and waits for all writes to finish: the last chance,
  /// at normal process exit.
  static func flushAll() {
    for storage in registry.withLock({ Array($0.values) }) {
      storage.flush()
      storage.waitForWrites()
    }
  }

  /// How many times this process has written the file (for tests and benchmarks).
  var writeCount: Int { state.withLock { $0.writeCount } }

  // MARK: - Loading

  /// Reads and decodes the file on the storage queue, waiting for it. A missing or empty
  /// file is `nil`. A file that does not decode is moved aside and reported as
  /// ``FileStorageKeyError/decodingFailed(url:preservedAt:underlying:)``.
  ///
  /// With `flushingPending`, a pending throttled write is written first, so the result is
  /// the newest value this process saved.
  func load<Value>(
    flushingPending: Bool, decode: @Sendable (Data) throws -> Value
  ) -> Result<Value?, any Error> {
    onQueue {
      if flushingPending, let job = takePending() { perform(job, throttled: true) }
      // A change not reported yet goes to every subscriber first (other scopes may hold
      // this file too); this load's bookkeeping below would otherwise hide it from them.
      if state.withLock({ $0.disk }) != .unknown { refresh() }
      let contents: (Data, FileStat)?
      do throws(FileSystemError) {
        contents = try FileSystem.read(path)
      } catch {
        return .failure(FileStorageKeyError.readFailed(url: url, errno: error.code))
      }
      guard let (data, identity) = contents, !data.isEmpty else {
        let disk: Disk = contents.map { .present($0.1, Fingerprint($0.0)) } ?? .absent
        state.withLock { $0.disk = disk }
        return .success(nil)
      }
      do {
        let value = try decode(data)
        state.withLock { $0.disk = .present(identity, Fingerprint(data)) }
        return .success(value)
      } catch {
        return .failure(quarantine(identity, underlying: error))
      }
    }
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
    immediate: Bool, window: Duration, clock: any FileStorageClock,
    continuation: SaveContinuation
  ) {
    let (timerToCancel, superseded) = state.withLock {
      state -> (FileTimer?, [SaveContinuation]) in
      let now = clock.now
      if immediate {
        var continuations = state.pending?.continuations ?? []
        continuations.append(continuation)
        let job = PendingWrite(encode: encode, decodes: decodes, continuations: continuations)
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
          encode: encode, decodes: decodes, continuations: [continuation])
        return (nil, pending.continuations)
      }
      if let lastWrite = state.lastWrite, now - lastWrite < window {
        state.pending = PendingWrite(
          encode: encode, decodes: decodes, continuations: [continuation])
        state.trailingTimer = clock.schedule(after: lastWrite + window - now) { [weak self] in
          self?.writeTrailing(clock: clock)
        }
        return (nil, [])
      }
      state.lastWrite = now
      enqueue(
        PendingWrite(encode: encode, decodes: decodes, continuations: [continuation]),
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
    if mayHoldUndecodableBytes, current != nil,
      let (data, identity) = try? FileSystem.read(path), !data.isEmpty, !job.decodes(data)
    {
      _ = FileSystem.moveAside(path, expected: identity)
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
      let identity = try FileSystem.writeAtomically(data, to: path)
      state.withLock { state in
        state.disk = .present(identity, Fingerprint(data))
        state.writeCount += 1
      }
      job.continuations.forEach { $0.resume() }
    } catch {
      let failure = FileStorageKeyError.writeFailed(url: url, errno: error.code)
      job.continuations.forEach { $0.resume(throwing: failure) }
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
      return (state.nextSubscriberID, state.watch == nil)
    }
    if needsWatch {
      let watch = FileWatcher.shared.watch(path) { [weak self] change in
        // A file created in place is empty until its writer closes it; wait for that.
        if change != .created { self?.scheduleRefresh() }
      }
      let unused = state.withLock { state -> FileWatcher.Watch? in
        guard state.watch == nil, !state.subscribers.isEmpty else { return watch }
        state.watch = watch
        return nil
      }
      unused?.cancel()
    }
    // The file may have changed between the load and the watch starting.
    scheduleRefresh()
    return { [weak self] in self?.unsubscribe(id) }
  }

  private func unsubscribe(_ id: UInt64) {
    let watch = state.withLock { state -> FileWatcher.Watch? in
      state.subscribers[id] = nil
      guard state.subscribers.isEmpty else { return nil }
      defer { state.watch = nil }
      return state.watch
    }
    watch?.cancel()
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
    let contents: (Data, FileStat)?
    do throws(FileSystemError) {
      contents = try FileSystem.read(path)
    } catch {
      let failure = FileStorageKeyError.readFailed(url: url, errno: error.code)
      state.withLock { $0.subscribers.values }.forEach { $0.failed(failure) }
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
      switch subscriber.prepare(data) {
      case .success(let deliver):
        deliver()
      case .failure(let error):
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
