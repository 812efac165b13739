import Foundation

/// What identifies one version of a file on disk without reading it: a rename or an in-place
/// write changes at least one of these.
package struct FileStat: Equatable, Sendable {
  var device: UInt64
  var inode: UInt64
  var size: Int64
  var modifiedSeconds: Int64
  var modifiedNanoseconds: Int64
  var mode: UInt32

  init(_ raw: stat) {
    device = UInt64(raw.st_dev)
    inode = UInt64(raw.st_ino)
    size = Int64(raw.st_size)
    mode = UInt32(raw.st_mode)
    #if canImport(Darwin)
    modifiedSeconds = Int64(raw.st_mtimespec.tv_sec)
    modifiedNanoseconds = Int64(raw.st_mtimespec.tv_nsec)
    #else
    modifiedSeconds = Int64(raw.st_mtim.tv_sec)
    modifiedNanoseconds = Int64(raw.st_mtim.tv_nsec)
    #endif
  }
}

/// A cheap stand-in for a file's bytes, to tell whether contents really changed.
struct Fingerprint: Equatable, Sendable {
  let count: Int
  let hash: Int

  init(_ data: Data) {
    var hasher = Hasher()
    data.withUnsafeBytes { hasher.combine(bytes: $0) }
    count = data.count
    hash = hasher.finalize()
  }
}

/// The POSIX file operations the file strategy needs, with `errno` kept for typed errors.
package enum FileSystem {
  /// The file's identity, or `nil` if nothing (or not a regular file) is there.
  static func stat(_ path: String) -> FileStat? {
    var raw = Foundation.stat()
    guard fstatat(AT_FDCWD, path, &raw, 0) == 0 else { return nil }
    return FileStat(raw)
  }

  /// Reads the whole file: its bytes and identity, or `nil` if it does not exist.
  static func read(_ path: String) throws(FileSystemError) -> (Data, FileStat)? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      if errno == ENOENT || errno == ENOTDIR { return nil }
      throw FileSystemError(errno)
    }
    defer { close(descriptor) }
    var raw = Foundation.stat()
    guard fstat(descriptor, &raw) == 0 else { throw FileSystemError(errno) }
    var data = Data(count: max(0, Int(raw.st_size)))
    var filled = 0
    while true {
      if filled == data.count { data.count += max(4096, data.count / 2) }
      let count = data.withUnsafeMutableBytes { buffer in
        Foundation.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
      }
      if count < 0 {
        if errno == EINTR { continue }
        throw FileSystemError(errno)
      }
      if count == 0 { break }
      filled += count
    }
    data.count = filled
    return (data, FileStat(raw))
  }

  /// The start of the names of `writeAtomically`'s temporary files for `path`:
  /// `DIRECTORY/.NAME.tether-`, followed by six random characters.
  static func temporaryPrefix(of path: String) -> String {
    let url = URL(fileURLWithPath: path)
    return "\(url.deletingLastPathComponent().path)/.\(url.lastPathComponent).tether-"
  }

  /// Removes the temporary files of `path` that writers killed mid-write left behind: regular
  /// files named `temporaryPrefix(of: path)` plus six characters and last modified more than
  /// `age` ago. A live write (in any process) takes milliseconds, so its file is younger.
  ///
  /// - Returns: The paths removed.
  @discardableResult
  static func removeAbandonedTemporaryFiles(
    of path: String, olderThan age: Duration, now: Date = Date()
  ) -> [String] {
    let prefix = temporaryPrefix(of: path)
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    let namePrefix = String(prefix.dropFirst(directory.count + 1))
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
      return []
    }
    let cutoff = now.timeIntervalSince1970 - Double(age.components.seconds)
    var removed: [String] = []
    for name in names where name.hasPrefix(namePrefix) && name.count == namePrefix.count + 6 {
      let candidate = "\(directory)/\(name)"
      var raw = Foundation.stat()
      guard lstat(candidate, &raw) == 0, raw.st_mode & S_IFMT == S_IFREG else { continue }
      let modified = FileStat(raw)
      guard Double(modified.modifiedSeconds) < cutoff, unlink(candidate) == 0 else { continue }
      removed.append(candidate)
    }
    return removed
  }

  /// Creates a new file `prefix` + six random characters, open for writing and closed on
  /// `exec`. (`mkstemp` leaves the descriptor inheritable: a process the app spawns meanwhile
  /// would keep the file open for writing, and its exit would report a write to watchers of
  /// the file the temporary file has since become.)
  static func createTemporaryFile(
    prefix: String
  ) throws(FileSystemError) -> (descriptor: Int32, path: String) {
    let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    for _ in 0..<100 {
      let path = prefix + String((0..<6).map { _ in characters.randomElement()! })
      let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      if descriptor >= 0 { return (descriptor, path) }
      if errno != EEXIST { throw FileSystemError(errno) }
    }
    throw FileSystemError(EEXIST)
  }

  /// Replaces the file with `data` atomically: writes a temporary file in the same directory,
  /// flushes it to disk (unless `sync` is false), then renames it over the file. Creates
  /// missing directories. (Also used by the remote-config cache, which skips the flush.)
  ///
  /// - Returns: The identity of the new file.
  @discardableResult
  package static func writeAtomically(
    _ data: Data, to path: String, sync: Bool = true
  ) throws(FileSystemError) -> FileStat {
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    try createDirectories(directory)
    let (descriptor, temporary) = try createTemporaryFile(prefix: temporaryPrefix(of: path))
    var succeeded = false
    defer {
      if !succeeded { unlink(temporary) }
    }
    // Keep the permissions of the file being replaced; new files get rw-r--r--.
    let mode = stat(path).map { mode_t($0.mode & 0o7777) } ?? 0o644
    fchmod(descriptor, mode)
    let written = data.withUnsafeBytes { buffer -> Int32 in
      var offset = 0
      while offset < buffer.count {
        let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if count < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += count
      }
      return 0
    }
    if written != 0 {
      close(descriptor)
      throw FileSystemError(written)
    }
    if sync, fsync(descriptor) != 0 {
      let code = errno
      close(descriptor)
      throw FileSystemError(code)
    }
    close(descriptor)
    guard rename(temporary, path) == 0 else { throw FileSystemError(errno) }
    succeeded = true
    guard let identity = stat(path) else { throw FileSystemError(errno) }
    return identity
  }

  /// Moves the file aside as `NAME.corrupt-TIMESTAMP`, but only if it is still the version
  /// `expected` describes (another process may have replaced it meanwhile).
  ///
  /// - Returns: Where the bytes went, or `nil` if the file changed or could not be moved.
  static func moveAside(_ path: String, expected: FileStat) -> URL? {
    guard stat(path) == expected else { return nil }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
    let stamp = formatter.string(from: Date())
    var destination = "\(path).corrupt-\(stamp)"
    var attempt = 1
    while stat(destination) != nil {
      attempt += 1
      destination = "\(path).corrupt-\(stamp)-\(attempt)"
    }
    guard rename(path, destination) == 0 else { return nil }
    return URL(fileURLWithPath: destination)
  }

  /// `mkdir -p`.
  static func createDirectories(_ path: String) throws(FileSystemError) {
    var isDirectory = Foundation.stat()
    if fstatat(AT_FDCWD, path, &isDirectory, 0) == 0 {
      guard isDirectory.st_mode & S_IFMT == S_IFDIR else { throw FileSystemError(ENOTDIR) }
      return
    }
    let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
    if parent != path { try createDirectories(parent) }
    if mkdir(path, 0o755) != 0 && errno != EEXIST { throw FileSystemError(errno) }
  }
}

/// A failed POSIX call.
package struct FileSystemError: Error {
  /// The `errno` value.
  package let code: Int32
  init(_ code: Int32) { self.code = code }
}
