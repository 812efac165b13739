import Foundation
import Streams
import Synchronization
import TetherSupport

/// The engine behind every `FileStorageKey` on disk for one path: throttles and performs
/// writes, watches the file, and tells subscribers about changes made by anyone else.
///
/// There is one per path per process (``FileStorageRegistry``), whatever the key's value type,
/// so every write to a file from this process goes through one serial queue, in the order
/// saves arrive. All disk I/O (and the encoding before it) happens on that queue, never on a
/// caller's thread, except `load`, which is synchronous by contract, and an `update` of an
/// idle file whose lock is free at once (see `update`).
///
/// How it tells its own writes from others': after each write or read it records the file's
/// identity (`FileStat`) and a fingerprint of its bytes; a watcher event that finds the same
/// identity, or the same bytes, is not a change.
///
/// The engine's stages each have a file: this one holds the state, loading and the queue;
/// `FileStorage+WriteQueue.swift` the throttled writes and their conflict checks
/// (`FileVersions` numbers the versions holders get),
/// `FileStorage+Update.swift` atomic updates, `FileStorage+Watching.swift` watching and
/// delivery; `FileLock` is the sidecar lock and `FileStorageRegistry` the one-per-path table.
final class FileStorage: Sendable {
  /// How a subscribed key turns bytes into a value, and where it reports changes.
  struct Subscriber: Sendable {
    /// The most bytes the subscribed key reads (``FileStorageKey/maximumFileSize``).
    let maximumSize: Int
    /// Decodes `data`, returning how to deliver the value at a version, or throws the
    /// decoding error.
    let prepare: @Sendable (Data) throws -> @Sendable (SharedVersion?) -> Void
    /// Reports that the file is gone (or empty), at a version.
    let deleted: @Sendable (SharedVersion?) -> Void
    /// Reports a failure.
    let failed: @Sendable (any Error) -> Void
  }

  /// What this process last knew to be on disk.
  enum Disk: Equatable {
    case unknown
    case absent
    case present(FileStat, Fingerprint)
    /// A file that did not decode when seen while watching. It stays where it is (its writer
    /// may not be finished with it) until this process is about to overwrite it.
    case corrupt(FileStat)
  }

  /// What a key asks of the files it writes and reads.
  struct WriteOptions: Sendable {
    /// The mode of a new file, before the umask (an existing file keeps its own).
    var permissions: mode_t
    /// The most bytes the key reads; a larger file is moved aside before it is replaced.
    var maximumSize: Int
  }

  /// Everything the storage's stages share, behind `state`.
  struct State {
    /// What this process last knew to be on disk.
    var disk = Disk.unknown
    /// The numbers of the states the file was seen in (see `FileVersions`): the versions
    /// holders get, and the ones their saves are conditional on.
    var versions = FileVersions()
    var lastWrite: Duration?
    var pending: PendingWrite?
    var trailingTimer: CancelOnce?
    var subscribers: [UInt64: Subscriber] = [:]
    var nextSubscriberID: UInt64 = 0
    var watches: [CancelOnce] = []
    var refreshScheduled = false
    /// The identity of the file this process is renaming into place, from just before the
    /// rename until `disk` records it: the watcher may report the rename in between.
    var renaming: FileStat?
    var writeCount = 0
    /// Whether holders were told that the system refused to watch the file.
    var reportedUnwatchable = false

    /// Records that the file is `disk` now, and returns its version: the number of that state
    /// (`nil` for a state no value can be derived from).
    mutating func see(_ disk: Disk) -> SharedVersion? {
      self.disk = disk
      return FileVersion(disk).map { versions.number($0) }
    }
  }

  let url: URL
  let path: String
  let queue: DispatchQueue
  /// Taken briefly by every stage; nothing is called out while it is held.
  let state = Lock(State())
  /// The sidecar lock every write takes, in every process (see `withFileLock`).
  let fileLock = FileLock()
  /// How many jobs were handed to the queue, or are waiting for it in `onQueue`, and have not
  /// finished: zero means nothing is on the queue or about to be (see `update`).
  let backlog = Atomic<Int>(0)
  private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

  /// A storage for `path`; only ``FileStorageRegistry`` makes them, one per path.
  init(path: String) {
    self.path = path
    self.url = URL(fileURLWithPath: path)
    queue = DispatchQueue(label: "tether.file-storage")
    queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
  }

  deinit {
    FileStorageRegistry.forget(path)
  }

  /// How many times this process has written the file (for tests and benchmarks).
  var writeCount: Int { state.withLock { $0.writeCount } }

  // MARK: - Loading

  /// Reads and decodes the file on the storage queue, waiting for it, with the version the
  /// holders get with it. A missing or empty file is `nil`. A file that does not decode is moved aside and reported as
  /// ``FileStorageKeyError/decodingFailed(url:preservedAt:underlying:)``; one above
  /// `maximumSize`, or something other than a regular file, fails and is left in place.
  ///
  /// With `flushingPending`, a pending throttled write is written first, so the result is
  /// the newest value this process saved.
  func load<Value>(
    flushingPending: Bool, maximumSize: Int, decode: @Sendable (Data) throws -> Value
  ) -> Result<(Value?, SharedVersion?), any Error> {
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
        return .success((nil, record(.absent)))
      }
      switch FileContents.interpret(data, maximumSize: maximumSize, decode: decode) {
      case .empty:
        return .success((nil, record(.present(identity, Fingerprint(data)))))
      case .value(let value):
        return .success((value, record(.present(identity, Fingerprint(data)))))
      case .tooLarge(let size):
        return .failure(FileStorageKeyError.fileTooLarge(url: url, size: size, limit: maximumSize))
      case .undecodable(let error):
        return .failure(quarantine(identity, underlying: error))
      }
    }
  }

  /// Loads as ``load(flushingPending:maximumSize:decode:)`` does and hands the result to
  /// `completion`, without making the caller wait for another writer: a job on the queue, or a
  /// pending write to flush, may wait for the file's lock while another process holds it, so
  /// then the load runs on the queue after them and `completion` is called there. Otherwise
  /// (the usual case: nothing queued, nothing to flush) it runs at once, and `completion` is
  /// called before this returns. For `$value.load()`, awaited from Swift's cooperative pool,
  /// whose few threads must never wait on a lock.
  func load<Value: Sendable>(
    flushingPending: Bool, maximumSize: Int, decode: @escaping @Sendable (Data) throws -> Value,
    completion: @escaping @Sendable (Result<(Value?, SharedVersion?), any Error>) -> Void
  ) {
    let run: @Sendable () -> Result<(Value?, SharedVersion?), any Error> = {
      self.load(flushingPending: flushingPending, maximumSize: maximumSize, decode: decode)
    }
    if isOnQueue { return completion(run()) }
    // Reserving the backlog (0 → 1) means no job is on the queue or waiting for it, as in
    // `update`; a pending write would take the lock, so its flush goes to the queue too.
    if backlog.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged
    {
      let result = queue.sync { () -> Result<(Value?, SharedVersion?), any Error>? in
        if flushingPending, state.withLock({ $0.pending != nil }) { return nil }
        return run()
      }
      backlog.subtract(1, ordering: .releasing)
      if let result { return completion(result) }
    }
    async { completion(run()) }
  }

  /// Records what is on disk now; returns its version (see `State.see`).
  @discardableResult
  func record(_ disk: Disk) -> SharedVersion? {
    state.withLock { $0.see(disk) }
  }

  /// The typed error for a failed read.
  func readError(_ error: FileSystemError, limit: Int) -> FileStorageKeyError {
    if let kind = error.nonRegularKind { return .notARegularFile(url: url, kind: kind) }
    if let size = error.oversize { return .fileTooLarge(url: url, size: size, limit: limit) }
    return .readFailed(url: url, errno: error.code)
  }

  /// The typed error for a failed write.
  func writeError(_ error: FileSystemError) -> FileStorageKeyError {
    if let kind = error.nonRegularKind { return .notARegularFile(url: url, kind: kind) }
    return .writeFailed(url: url, errno: error.code)
  }

  /// Moves an undecodable file aside and records that nothing is there now. Runs on the
  /// queue.
  func quarantine(_ identity: FileStat, underlying: any Error) -> FileStorageKeyError {
    let preserved = FileSystem.moveAside(path, expected: identity)
    if preserved != nil { state.withLock { _ = $0.see(.absent) } }
    return .decodingFailed(url: url, preservedAt: preserved, underlying: underlying)
  }

  static func matches(_ known: Disk, _ current: FileStat?) -> Bool {
    switch (known, current) {
    case (.absent, nil): return true
    case (.present(let identity, _), let current?): return identity == current
    case (.corrupt(let identity), let current?): return identity == current
    default: return false
    }
  }

  /// Whether the caller is running on this storage's queue.
  var isOnQueue: Bool {
    DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self)
  }

  /// Runs `body` on the queue later, counted in `backlog` until it has run.
  func async(_ body: @escaping @Sendable () -> Void) {
    backlog.add(1, ordering: .relaxed)
    queue.async {
      body()
      self.backlog.subtract(1, ordering: .releasing)
    }
  }

  /// Runs `body` on the queue and waits for it, counted in `backlog` meanwhile; runs it
  /// directly when already there (a subscriber that loads while being told about a change must
  /// not deadlock).
  func onQueue<T>(_ body: () -> T) -> T {
    if isOnQueue { return body() }
    backlog.add(1, ordering: .relaxed)
    defer { backlog.subtract(1, ordering: .releasing) }
    return queue.sync(execute: body)
  }
}
