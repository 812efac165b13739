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
///
/// The rules every file key keeps live here (ARCHITECTURE.md, "Invariants each layer keeps", file storage): only regular files
/// are read, never more than a size cap; a symbolic link at the path is followed and stays a
/// link; new files get `0666 & ~umask` (or a key's tighter mode), existing ones keep their mode
/// and owner; a file the process may not write is never replaced; and the identity recorded for
/// a write is the written file's own, taken before the rename.
package enum FileSystem {
  /// The file's identity (following symbolic links), or `nil` if nothing is there.
  static func stat(_ path: String) -> FileStat? {
    var raw = Foundation.stat()
    guard fstatat(AT_FDCWD, path, &raw, 0) == 0 else { return nil }
    return FileStat(raw)
  }

  /// Reads the whole file: its bytes and identity, or `nil` if it does not exist.
  ///
  /// Only a regular file is read: a FIFO, device, socket or directory at the path (or at the
  /// end of a symbolic link) fails at once with `nonRegularKind` set, without opening it for
  /// long (a FIFO is opened non-blocking, so a missing writer cannot hang the caller). A file
  /// of more than `maximumSize` bytes fails with `oversize` set, having read at most one byte
  /// more than the cap.
  static func read(
    _ path: String, maximumSize: Int = .max
  ) throws(FileSystemError) -> (Data, FileStat)? {
    var before = Foundation.stat()
    guard fstatat(AT_FDCWD, path, &before, 0) == 0 else {
      if errno == ENOENT || errno == ENOTDIR { return nil }
      throw FileSystemError(errno)
    }
    // Sockets cannot be opened at all, and opening a device can have effects: classify first.
    if let kind = nonRegularKind(before.st_mode) { throw FileSystemError(nonRegular: kind) }
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      if errno == ENOENT || errno == ENOTDIR { return nil }
      throw FileSystemError(errno)
    }
    defer { close(descriptor) }
    var raw = Foundation.stat()
    guard fstat(descriptor, &raw) == 0 else { throw FileSystemError(errno) }
    // Replaced between the two looks: judge what was opened.
    if let kind = nonRegularKind(raw.st_mode) { throw FileSystemError(nonRegular: kind) }
    let size = max(0, Int(raw.st_size))
    if size > maximumSize { throw FileSystemError(oversize: size) }
    // One byte more than the cap allows tells a file that grew past it while being read.
    let limit = maximumSize == .max ? Int.max : maximumSize + 1
    var data = Data(count: min(limit, size))
    var filled = 0
    while true {
      if filled == data.count {
        if data.count >= limit { break }
        data.count = min(limit, data.count + max(4096, data.count / 2))
      }
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
    if filled > maximumSize { throw FileSystemError(oversize: filled) }
    data.count = filled
    return (data, FileStat(raw))
  }

  /// What a file of this mode is, when it is not a regular file (`"a FIFO"`, …).
  static func nonRegularKind(_ mode: mode_t) -> String? {
    switch mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: return "a directory"
    case S_IFIFO: return "a FIFO"
    case S_IFSOCK: return "a socket"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFLNK: return "a symbolic link"
    default: return "not a regular file"
    }
  }

  /// The file a write to `path` must replace: `path` itself or, when `path` is a symbolic link
  /// (or a chain of them), the file at its end, which need not exist yet.
  static func resolveSymbolicLinks(_ path: String) throws(FileSystemError) -> String {
    var current = path
    for _ in 0..<40 {
      var raw = Foundation.stat()
      guard lstat(current, &raw) == 0, raw.st_mode & S_IFMT == S_IFLNK else { return current }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let count = readlink(current, &buffer, buffer.count - 1)
      guard count >= 0 else { throw FileSystemError(errno) }
      let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let directory = URL(fileURLWithPath: current).deletingLastPathComponent().path
      let joined = target.hasPrefix("/") ? target : "\(directory)/\(target)"
      current = URL(fileURLWithPath: joined).standardizedFileURL.path
    }
    throw FileSystemError(ELOOP)
  }

  /// The start of the names of `writeAtomically`'s temporary files for `path`:
  /// `DIRECTORY/.NAME.tether-`, followed by six random characters.
  static func temporaryPrefix(of path: String) -> String {
    let (directory, name) = split(path)
    return "\(directory == "/" ? "" : directory)/.\(name).tether-"
  }

  /// An absolute path's directory and last component, by plain string work (a `URL` round
  /// trip costs microseconds, and the write path takes several): `/a/b.json` → (`/a`,
  /// `b.json`), `/b.json` → (`/`, `b.json`). A trailing slash is ignored.
  static func split(_ path: String) -> (directory: String, name: String) {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return (".", String(trimmed)) }
    let directory = trimmed[..<slash]
    return (
      directory.isEmpty ? "/" : String(directory), String(trimmed[trimmed.index(after: slash)...])
    )
  }

  /// The sidecar lock file of `path` that every write of a file key locks:
  /// `DIRECTORY/.NAME.tether-lock` (never matched by `isTemporaryName`, never removed).
  static func lockPath(of path: String) -> String {
    temporaryPrefix(of: path) + "lock"
  }

  /// Whether `name` is the name of one of `writeAtomically`'s temporary files, for any file:
  /// `.NAME.tether-` and six letters or digits.
  static func isTemporaryName(_ name: String) -> Bool {
    let marker = ".tether-"
    guard name.hasPrefix("."), let range = name.range(of: marker, options: .backwards),
      range.lowerBound > name.index(after: name.startIndex)
    else { return false }
    let suffix = name[range.upperBound...]
    return suffix.count == 6 && suffix.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
  }

  /// Removes the temporary files that writers killed mid-write left in `directory`: regular
  /// files named as `isTemporaryName` says and last modified more than `age` ago. A live write
  /// (in any process) takes milliseconds, so its file is younger.
  ///
  /// - Returns: The paths removed.
  @discardableResult
  static func removeAbandonedTemporaryFiles(
    in directory: String, olderThan age: Duration, now: Date = Date()
  ) -> [String] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
      return []
    }
    let cutoff = now.timeIntervalSince1970 - Double(age.components.seconds)
    var removed: [String] = []
    for name in names where isTemporaryName(name) {
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
  /// `exec`, with `mode` less the umask. (`mkstemp` leaves the descriptor inheritable: a
  /// process the app spawns meanwhile would keep the file open for writing, and its exit would
  /// report a write to watchers of the file the temporary file has since become.)
  static func createTemporaryFile(
    prefix: String, mode: mode_t = 0o600
  ) throws(FileSystemError) -> (descriptor: Int32, path: String) {
    let characters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    for _ in 0..<100 {
      // One draw from the system generator (one syscall) for all six characters.
      var bits = UInt64.random(in: 0...UInt64.max)
      var suffix = [UInt8]()
      suffix.reserveCapacity(6)
      for _ in 0..<6 {
        suffix.append(characters[Int(bits % UInt64(characters.count))])
        bits /= UInt64(characters.count)
      }
      let path = prefix + String(decoding: suffix, as: UTF8.self)
      let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
      if descriptor >= 0 { return (descriptor, path) }
      if errno != EEXIST { throw FileSystemError(errno) }
    }
    throw FileSystemError(EEXIST)
  }

  /// Replaces the file with `data` atomically: writes a temporary file in the same directory,
  /// flushes it to disk (unless `sync` is false), then renames it over the file. Creates
  /// missing directories. (Also used by the remote-config cache, which skips the flush.)
  ///
  /// - A symbolic link at `path` is followed: the file at its end is replaced (in its own
  ///   directory), and the link stays a link.
  /// - A new file gets `permissions` less the umask (`0666 & ~umask` by default); an existing
  ///   file keeps its mode and, where the process may set it, its owner.
  /// - An existing file this process may not write is left untouched: the write fails with
  ///   `EACCES` (or `EROFS`) although the directory would allow the rename. Something other
  ///   than a regular file at the path is never replaced.
  ///
  /// - Returns: The identity of the new file, taken from the written file before the rename:
  ///   a `stat` of the path afterwards could already see another process's file.
  @discardableResult
  package static func writeAtomically(
    _ data: Data, to path: String, sync: Bool = true, permissions: mode_t = 0o666
  ) throws(FileSystemError) -> FileStat {
    let target = try resolveSymbolicLinks(path)
    try createDirectories(split(target).directory)
    return try writeAtomically(data, toResolved: target, sync: sync, permissions: permissions)
  }

  /// `writeAtomically(_:to:sync:permissions:)` for a caller that has just resolved the path's
  /// symbolic links into `target` and created its directory (the file key's writer, which did
  /// both to take the file's lock). `beforeRename` gets the new file's identity just before
  /// it takes the path, so a watcher that sees the rename can already tell it is this write.
  static func writeAtomically(
    _ data: Data, toResolved target: String, sync: Bool = true, permissions: mode_t = 0o666,
    beforeRename: (FileStat) -> Void = { _ in }
  ) throws(FileSystemError) -> FileStat {
    var existing = Foundation.stat()
    let exists = lstat(target, &existing) == 0
    if exists {
      if let kind = nonRegularKind(existing.st_mode) { throw FileSystemError(nonRegular: kind) }
      guard faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) == 0 else {
        throw FileSystemError(errno)
      }
    }
    // An existing file's mode is applied below; until then the new file is private.
    let (descriptor, temporary) = try createTemporaryFile(
      prefix: temporaryPrefix(of: target), mode: exists ? 0o600 : permissions & 0o777)
    var succeeded = false
    defer {
      if !succeeded { unlink(temporary) }
    }
    if exists {
      if existing.st_uid != geteuid() || existing.st_gid != getegid() {
        // Only a privileged process may give the file away; others keep their own ownership.
        _ = fchown(descriptor, existing.st_uid, existing.st_gid)
      }
      fchmod(descriptor, existing.st_mode & 0o7777)
    }
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
    var raw = Foundation.stat()
    guard fstat(descriptor, &raw) == 0 else {
      let code = errno
      close(descriptor)
      throw FileSystemError(code)
    }
    close(descriptor)
    beforeRename(FileStat(raw))
    guard rename(temporary, target) == 0 else { throw FileSystemError(errno) }
    succeeded = true
    return FileStat(raw)
  }

  /// Moves the file aside as `NAME.corrupt-TIMESTAMP`, but only if it is still the version
  /// `expected` describes (another process may have replaced it meanwhile). A symbolic link is
  /// followed: the bytes it points to are moved, next to themselves.
  ///
  /// - Returns: Where the bytes went, or `nil` if the file changed or could not be moved.
  static func moveAside(_ path: String, expected: FileStat) -> URL? {
    guard stat(path) == expected, let target = try? resolveSymbolicLinks(path) else {
      return nil
    }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
    let stamp = formatter.string(from: Date())
    var attempt = 1
    var destination = FileContents.preservedName(of: target, stamp: stamp, attempt: attempt)
    while stat(destination) != nil {
      attempt += 1
      destination = FileContents.preservedName(of: target, stamp: stamp, attempt: attempt)
    }
    guard rename(target, destination) == 0 else { return nil }
    return URL(fileURLWithPath: destination)
  }

  /// `mkdir -p`.
  static func createDirectories(_ path: String) throws(FileSystemError) {
    var isDirectory = Foundation.stat()
    if fstatat(AT_FDCWD, path, &isDirectory, 0) == 0 {
      guard isDirectory.st_mode & S_IFMT == S_IFDIR else { throw FileSystemError(ENOTDIR) }
      return
    }
    let parent = split(path).directory
    if parent != path && parent != "." { try createDirectories(parent) }
    if mkdir(path, 0o777) != 0 && errno != EEXIST { throw FileSystemError(errno) }
  }
}

/// A failed file operation: a POSIX call's `errno`, or one of the file strategy's own refusals.
package struct FileSystemError: Error {
  /// The `errno` value (`EINVAL` for something that is not a regular file, `EFBIG` for a file
  /// above the size cap).
  package let code: Int32
  /// What is at the path, when it is not a regular file (`"a FIFO"`, `"a directory"`, …).
  let nonRegularKind: String?
  /// The file's size, when it is larger than the reader allows.
  let oversize: Int?

  init(_ code: Int32) {
    self.code = code
    nonRegularKind = nil
    oversize = nil
  }

  init(nonRegular kind: String) {
    code = EINVAL
    nonRegularKind = kind
    oversize = nil
  }

  init(oversize size: Int) {
    code = EFBIG
    nonRegularKind = nil
    oversize = size
  }
}
