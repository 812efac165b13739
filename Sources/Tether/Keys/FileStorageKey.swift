import Foundation

/// A key that persists a shared value in a file and keeps every holder — in this process and
/// in others — in step with it.
///
/// Create one with
/// ``SharedReaderKey/fileStorage(_:decoder:encoder:throttle:permissions:maximumFileSize:)``
/// for `Codable` values (JSON) or
/// ``SharedReaderKey/fileStorage(_:decode:encode:throttle:permissions:maximumFileSize:)`` for
/// any format:
///
/// ```swift
/// @Shared(.fileStorage(.documentsDirectory.appending(path: "settings.json")))
/// var settings = Settings()
/// ```
///
/// - A missing or empty file loads as the declared default; no file is created until the
///   first save.
/// - Writes are atomic (a temporary file in the same directory, then a rename), create
///   missing directories, and happen off the caller's thread: `withLock` never waits for
///   the disk.
/// - Writes are throttled: the first save after a quiet period is written at once, later
///   saves inside the window (``throttle``, one second by default) coalesce into one
///   trailing write of the newest value. `save()` writes at once. Pending writes are
///   flushed when the last holder goes away and at normal process exit.
/// - Changes other processes make (writes in place, atomic replaces, deletion) reach every
///   holder through the platform's file watcher (inotify on Linux), without polling. A
///   change made during the throttle window wins over the pending write. The key's own
///   writes are not reported back as changes.
/// - A file that does not decode sets `loadError`, the default is used, and the bytes are
///   moved aside as `NAME.corrupt-TIMESTAMP` before anything overwrites them.
/// - Only regular files are read, never more than ``maximumFileSize`` bytes (64 MiB by
///   default); a FIFO, device, socket or directory at the path is an error at once. A symbolic
///   link at the path is followed, and stays a link when the file is saved.
/// - New files get `0666 & ~umask` (or the key's tighter ``permissions``); an existing file
///   keeps its mode. A file this process may not write is never replaced: the save fails.
///
/// Across processes, every write takes an advisory lock (`flock`) on the sidecar file
/// `.NAME.tether-lock` next to the file:
///
/// - `$value.update { }` (``update(_:initialValue:continuation:)``) holds it from reading the
///   stored value to writing the result, so concurrent updates from any number of processes
///   are exact.
/// - A save made through `withLock` is written only if the file is still the version its
///   value was derived from (``SaveContinuation/version``: the version the holders had when the
///   body ran, which the key hands over with each value it loads or delivers), or this
///   process's own writes over that version. If another process changed it meanwhile, the
///   newer file wins: holders get its value and `saveError` is
///   ``FileStorageKeyError/conflict(url:)``. That holds even for a mutation made in the
///   microseconds while another process's change is being handed to the holders, and for a
///   save still waiting for its throttle window. `save()` writes unconditionally.
/// - The kernel releases the lock of a process that dies, so a crash never blocks the others.
///
/// In a process running tests, a key keeps its file in memory unless the test opted into the
/// disk with `withSharedStorage(.isolated(files: .real))` or `.isolatedSharedState(files:
/// .real)` (see ``SharedStorage/process``): tests never touch the user's files by default.
///
/// Keys for the same file share one reference, however the path is spelled:
/// `/a/b.json`, `/a//b.json` and `/a/./b.json` are one value.
public struct FileStorageKey<Value: Sendable>: AtomicSharedKey {
  /// The identity of a file key: the file's standardized path, with symbolic links in its
  /// existing part resolved.
  public struct ID: Hashable, Sendable {
    /// The normalized absolute path of the file.
    public let path: String
  }

  /// The file, with its path normalized.
  public let url: URL
  /// How long saves after a write are held back and coalesced into one trailing write.
  public let throttle: Duration
  /// The mode a new file is created with, before the process's umask removes bits: `0o666`
  /// by default (so `0o644` under the usual umask `022`); `0o600` keeps a file private. An
  /// existing file keeps its own mode.
  public let permissions: Int
  /// The largest file, in bytes, the key reads; a larger one fails to load with
  /// ``FileStorageKeyError/fileTooLarge(url:size:limit:)`` and is never read into memory.
  /// ``defaultMaximumFileSize`` unless the key was created with another limit.
  public let maximumFileSize: Int

  /// The size cap of keys that do not choose one: 64 MiB, far above any settings or state
  /// file, and small enough that a wrong path (a log, a disk image) cannot exhaust memory.
  public static var defaultMaximumFileSize: Int { FileStorageKeyDefaults.maximumFileSize }

  /// Where a key keeps its file, chosen once, when the key is created.
  enum Backend: Sendable {
    /// The disk, through the one engine this process keeps for the path.
    case disk(FileStorage)
    /// The in-memory files of the isolated scope the key was created in. Captured here because
    /// saves run on other threads, where the task-local scope is not set. A key on this backend
    /// makes no system call that names its path: not to normalize it, not to load, save or
    /// watch, not to clean up the directory.
    case memory(InMemoryFiles)
  }

  /// The file's normalized path (see ``ID``; in an isolated scope, normalized without looking
  /// at the disk).
  let path: String
  let backend: Backend
  let clock: any FileStorageClock
  let decode: @Sendable (Data) throws -> Value
  let encode: @Sendable (Value) throws -> Data

  /// Creates a key for the file at `url` that converts values with `decode` and `encode`.
  ///
  /// - Parameters:
  ///   - url: A file URL. Relative paths are resolved against the current directory.
  ///   - throttle: The throttle window for saves made through `withLock`.
  ///   - permissions: The mode of a new file before the umask (see ``permissions``).
  ///   - maximumFileSize: The largest file the key reads (see ``maximumFileSize``).
  ///   - decode: Turns the file's bytes into a value; a thrown error marks the file corrupt.
  ///   - encode: Turns a value into the bytes to write.
  public init(
    url: URL, throttle: Duration = .seconds(1), permissions: Int = 0o666,
    maximumFileSize: Int = FileStorageKeyDefaults.maximumFileSize,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    self.init(
      url: url, throttle: throttle, clock: SystemFileStorageClock(), permissions: permissions,
      maximumFileSize: maximumFileSize, decode: decode, encode: encode)
  }

  init(
    url: URL, throttle: Duration, clock: any FileStorageClock, permissions: Int = 0o666,
    maximumFileSize: Int = FileStorageKeyDefaults.maximumFileSize,
    decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data
  ) {
    if let files = SharedStorage.current.files {
      path = Self.normalizeLexically(url)
      backend = .memory(files)
    } else {
      path = Self.normalize(url)
      backend = .disk(FileStorageRegistry.storage(at: path))
    }
    self.url = URL(fileURLWithPath: path, isDirectory: false)
    self.throttle = max(.zero, throttle)
    self.permissions = permissions & 0o777
    self.maximumFileSize = max(0, maximumFileSize)
    self.clock = clock
    self.decode = decode
    self.encode = encode
  }

  /// The file's normalized path.
  public var id: ID { ID(path: path) }

  /// The disk engine of a key created outside an isolated scope (for tests of the engine; a key
  /// on in-memory files has none, and asking for it is a programming error).
  var storage: FileStorage {
    guard case .disk(let storage) = backend else {
      preconditionFailure("\(self) keeps its file in an isolated scope's memory, not on disk")
    }
    return storage
  }

  /// Reads the file, handing over the file's version (see ``SharedVersion``): a missing or
  /// empty file is the initial value, a file that does not decode fails with
  /// ``FileStorageKeyError/decodingFailed(url:preservedAt:underlying:)`` after its bytes were
  /// moved aside.
  ///
  /// - A new holder's first load (`.initialValue`) reads synchronously, so the holder starts
  ///   with the stored value, as swift-sharing's file key does.
  /// - A `.userInitiated` load (`$value.load()`) first writes any pending save. It resumes
  ///   before returning when nothing of this file is queued; when a write is queued or pending,
  ///   which may wait for another process's lock, it resumes from the file's queue after that
  ///   write instead of blocking the caller's thread.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    let storage: FileStorage
    switch backend {
    case .memory(let files): return continuation.resume(with: load(from: files))
    case .disk(let disk): storage = disk
    }
    guard case .userInitiated = context else {
      return Self.resume(
        continuation,
        with: storage.load(flushingPending: false, maximumSize: maximumFileSize, decode: decode))
    }
    storage.load(flushingPending: true, maximumSize: maximumFileSize, decode: decode) { result in
      Self.resume(continuation, with: result)
    }
  }

  private static func resume(
    _ continuation: LoadContinuation<Value>,
    with result: Result<(Value?, SharedVersion?), any Error>
  ) {
    switch result {
    case .success((let value?, let version)):
      continuation.resume(returning: value, version: version)
    case .success((nil, let version)): continuation.resumeReturningInitialValue(version: version)
    case .failure(let error): continuation.resume(throwing: error)
    }
  }

  /// Watches the file's directory and reports changes made by others: a new value, the
  /// initial value when the file is deleted or emptied, or an error when it does not decode.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let storage: FileStorage
    switch backend {
    case .memory(let files): return subscribe(to: files, subscriber: subscriber)
    case .disk(let disk): storage = disk
    }
    let decode = self.decode
    let unsubscribe = storage.subscribe(
      FileStorage.Subscriber(
        maximumSize: maximumFileSize,
        prepare: { data in
          let value = try decode(data)
          return { subscriber.yield(value, version: $0) }
        },
        deleted: { subscriber.yieldReturningInitialValue(version: $0) },
        failed: { subscriber.yield(throwing: $0) }
      ))
    return SharedSubscription(unsubscribe)
  }

  /// Encodes and writes `value` off the caller's thread; `.didSet` saves are throttled and
  /// written only over the version they were derived from (`continuation.version`),
  /// `.userInitiated` ones are written at once and unconditionally. Resumes `continuation`
  /// after the write with the version written, or with a ``FileStorageKeyError`` if encoding or
  /// writing failed, or refused as a conflict when another process's change won
  /// (``FileStorageKeyError/conflict(url:)``, after the holders were given that change).
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    let storage: FileStorage
    switch backend {
    case .memory(let files): return continuation.resume(with: save(value, to: files))
    case .disk(let disk): storage = disk
    }
    let encode = self.encode
    let decode = self.decode
    storage.save(
      encode: { try encode(value) },
      decodes: { (try? decode($0)) != nil },
      options: writeOptions,
      condition: context == .userInitiated ? .unconditional : .derivedFrom(continuation.version),
      window: throttle, clock: clock, continuation: continuation)
  }

  /// Applies `transform` to the value stored in the file atomically with respect to every
  /// writer of the file in every process, writes the result, and resumes `continuation` with
  /// it. `Shared.update(_:)` calls this; `transform` runs exactly once per call here (it may
  /// run more than once with other keys). The caller never waits for another writer: when
  /// nothing of the file is waiting in this process and its lock is free, the update runs at
  /// once on the calling thread and resumes `continuation` before returning; otherwise it runs
  /// on the file's queue, which waits for the lock, and this returns at once.
  ///
  /// The file's lock is held from the read to the atomic write. A missing or empty file
  /// starts from `initialValue`. A file that does not decode is moved aside (as a load does)
  /// and the update fails with ``FileStorageKeyError/decodingFailed(url:preservedAt:underlying:)``;
  /// an error thrown by `transform` ends the update with nothing written.
  public func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void,
    initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    let storage: FileStorage
    switch backend {
    case .memory(let files):
      return update(transform, initialValue: initialValue, in: files) {
        continuation.resume(with: $0)
      }
    case .disk(let disk): storage = disk
    }
    storage.update(
      initialValue: initialValue, options: writeOptions, decode: decode, encode: encode,
      transform: transform
    ) { result in
      switch result {
      case .success((let value, let version)):
        continuation.resume(returning: value, version: version)
      case .failure(let error): continuation.resume(throwing: error)
      }
    }
  }

  var writeOptions: FileStorage.WriteOptions {
    FileStorage.WriteOptions(permissions: mode_t(permissions), maximumSize: maximumFileSize)
  }

  /// `/a//b/./c.json` → `/a/b/c.json`, with symbolic links in the existing part of the path
  /// resolved (so `/tmp` and `/private/tmp` agree on Apple platforms).
  static func normalize(_ url: URL) -> String {
    var path = url.standardizedFileURL.path
    while path.contains("//") { path = path.replacingOccurrences(of: "//", with: "/") }
    let standardized = URL(fileURLWithPath: path).standardizedFileURL
    let name = standardized.lastPathComponent
    let directory = standardized.deletingLastPathComponent()
    let resolved = directory.resolvingSymlinksInPath().path
    return (resolved.hasSuffix("/") ? resolved : resolved + "/") + name
  }

  /// `/a//b/./c/../d.json` → `/a/b/d.json`, from the text alone: no system call names the path
  /// (an isolated scope's files are in memory, and its tests must not reach the real path).
  /// A relative path is resolved against the current directory.
  static func normalizeLexically(_ url: URL) -> String {
    var path = url.path
    if !path.hasPrefix("/") { path = FileManager.default.currentDirectoryPath + "/" + path }
    var components: [Substring] = []
    for component in path.split(separator: "/") {
      switch component {
      case ".": continue
      case "..": _ = components.popLast()
      default: components.append(component)
      }
    }
    return "/" + components.joined(separator: "/")
  }
}

extension FileStorageKey: CustomStringConvertible {
  /// `.fileStorage(PATH)`.
  public var description: String { ".fileStorage(\(path))" }
}

extension SharedReaderKey {
  /// A key that stores a `Codable` value as JSON in the file at `url`.
  ///
  /// ```swift
  /// @Shared(.fileStorage(URL(filePath: "/var/lib/app/settings.json")))
  /// var settings = Settings()
  /// ```
  ///
  /// - Parameters:
  /// The default encoder writes keys sorted (`.sortedKeys`), so saving the same value twice
  /// writes the same bytes and diffs of the file stay small.
  ///
  /// - Parameters:
  ///   - url: The file. Missing directories are created on the first save.
  ///   - decoder: The decoder for the file's contents.
  ///   - encoder: The encoder for saves (default: a `JSONEncoder` with `.sortedKeys`).
  ///   - throttle: How long later saves are coalesced after a write (default one second).
  ///   - permissions: The mode of a new file before the umask (default `0o666`; `0o600` keeps
  ///     it private). An existing file keeps its mode.
  ///   - maximumFileSize: The largest file the key reads (default 64 MiB).
  public static func fileStorage<Value: Codable & Sendable>(
    _ url: URL, decoder: JSONDecoder = JSONDecoder(),
    encoder: JSONEncoder = FileStorageKeyDefaults.encoder(),
    throttle: Duration = .seconds(1), permissions: Int = 0o666,
    maximumFileSize: Int = FileStorageKeyDefaults.maximumFileSize
  ) -> Self where Self == FileStorageKey<Value> {
    FileStorageKey(
      url: url, throttle: throttle, permissions: permissions, maximumFileSize: maximumFileSize,
      decode: { try decoder.decode(Value.self, from: $0) },
      encode: { try encoder.encode($0) })
  }

  /// A key that stores a value in the file at `url` in any format.
  ///
  /// ```swift
  /// @Shared(.fileStorage(url, decode: { String(decoding: $0, as: UTF8.self) },
  ///                      encode: { Data($0.utf8) }))
  /// var notes = ""
  /// ```
  ///
  /// - Parameters:
  ///   - url: The file. Missing directories are created on the first save.
  ///   - decode: Turns the file's bytes into a value; throw to mark the file corrupt.
  ///   - encode: Turns a value into bytes.
  ///   - throttle: How long later saves are coalesced after a write (default one second).
  ///   - permissions: The mode of a new file before the umask (default `0o666`).
  ///   - maximumFileSize: The largest file the key reads (default 64 MiB).
  public static func fileStorage<Value: Sendable>(
    _ url: URL, decode: @escaping @Sendable (Data) throws -> Value,
    encode: @escaping @Sendable (Value) throws -> Data, throttle: Duration = .seconds(1),
    permissions: Int = 0o666, maximumFileSize: Int = FileStorageKeyDefaults.maximumFileSize
  ) -> Self where Self == FileStorageKey<Value> {
    FileStorageKey(
      url: url, throttle: throttle, permissions: permissions, maximumFileSize: maximumFileSize,
      decode: decode, encode: encode)
  }
}

extension FileStorageKey {
  /// How many times this process has written the key's file so far (for benchmarks and
  /// diagnostics; not part of the stable API).
  /// Always zero in an isolated scope, whose files are in memory.
  @_spi(Diagnostics) public var writeCount: Int {
    guard case .disk(let storage) = backend else { return 0 }
    return storage.writeCount
  }
}

/// The defaults of file keys, in one place so every way of creating a key agrees.
public enum FileStorageKeyDefaults {
  /// 64 MiB: the size cap of a key that does not choose one (``FileStorageKey/maximumFileSize``).
  public static let maximumFileSize = 64 * 1024 * 1024

  /// The encoder of `.fileStorage(_:)` for `Codable` values: JSON with sorted keys, so the same
  /// value always writes the same bytes (stable diffs, no rewrite of an unchanged file's order).
  public static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return encoder
  }
}
