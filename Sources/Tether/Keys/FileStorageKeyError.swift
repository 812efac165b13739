import Foundation

/// Why a file-backed shared value could not be loaded or saved.
///
/// `FileStorageKey` reports these through a holder's `loadError` and `saveError`; the
/// holder keeps a usable value in each case, and nothing on disk is lost.
public enum FileStorageKeyError: Error, CustomStringConvertible, Sendable {
  /// The file exists but its contents could not be decoded. Nothing is lost: when loading,
  /// the bytes are moved aside to `preservedAt` (`NAME.corrupt-TIMESTAMP` next to the
  /// file). When the bad contents arrive while the file is watched, they stay in place
  /// (their writer may not be finished) and `preservedAt` is `nil`; they are moved aside in
  /// the same way before this process writes the file again.
  case decodingFailed(url: URL, preservedAt: URL?, underlying: any Error)
  /// The value could not be encoded; the file was not touched.
  case encodingFailed(url: URL, underlying: any Error)
  /// The file exists but could not be read (`errno` says why).
  case readFailed(url: URL, errno: Int32)
  /// The file or its directory could not be written (`errno` says why, for example `EACCES`
  /// for a file this process may not write, `ENOTDIR` or `ENOSPC`). The previous file, if
  /// any, is intact: a file the process may not write is never replaced, even where the
  /// directory would allow it.
  case writeFailed(url: URL, errno: Int32)
  /// Something other than a regular file is at the path (`kind` says what: `"a FIFO"`,
  /// `"a directory"`, `"a character device"`, …, also at the end of a symbolic link). File
  /// keys read and replace only regular files; it was left alone.
  case notARegularFile(url: URL, kind: String)
  /// The file holds more than the key's ``FileStorageKey/maximumFileSize`` bytes. Nothing
  /// was decoded, and the file was left in place.
  case fileTooLarge(url: URL, size: Int, limit: Int)
  /// Another process changed the file after this process last read or wrote it, so a save
  /// made through `withLock` was not written: the newer file wins, and the holders now have
  /// its value. Reported in `saveError`; an explicit `save()` writes unconditionally, and
  /// `update` never conflicts (it holds the file's lock from read to write).
  case conflict(url: URL)
  /// The system refused to watch the file for changes (`errno` says why: usually `ENOSPC`,
  /// the inotify watch limit, `fs.inotify.max_user_watches`). The key checks the file every
  /// `checkingEvery` instead, so changes still arrive, later. Reported once per file, in
  /// `loadError`.
  case watchUnavailable(url: URL, errno: Int32, checkingEvery: Duration)

  /// The file the error concerns.
  public var url: URL {
    switch self {
    case .decodingFailed(let url, _, _), .encodingFailed(let url, _), .readFailed(let url, _),
      .writeFailed(let url, _), .notARegularFile(let url, _), .fileTooLarge(let url, _, _),
      .conflict(let url), .watchUnavailable(let url, _, _):
      return url
    }
  }

  /// A one-line explanation naming the file.
  public var description: String {
    switch self {
    case .decodingFailed(let url, let preservedAt, let underlying):
      let kept = preservedAt.map { "its bytes were moved to \($0.path)" } ?? "it was left in place"
      return "could not decode \(url.path) (\(underlying)); \(kept)"
    case .encodingFailed(let url, let underlying):
      return "could not encode the value for \(url.path): \(underlying)"
    case .readFailed(let url, let code):
      return "could not read \(url.path): \(String(cString: strerror(code)))"
    case .writeFailed(let url, let code) where code == EACCES || code == EPERM || code == EROFS:
      return
        "could not write \(url.path): \(String(cString: strerror(code))) (this process may not "
        + "write it; the file was left untouched)"
    case .writeFailed(let url, let code):
      return "could not write \(url.path): \(String(cString: strerror(code)))"
    case .notARegularFile(let url, let kind):
      return "\(url.path) is \(kind), not a regular file; file storage only reads and writes "
        + "regular files, and left it alone"
    case .fileTooLarge(let url, let size, let limit):
      return "\(url.path) holds \(size) bytes, more than the key's limit of \(limit); "
        + "it was not read (raise maximumFileSize to load it)"
    case .conflict(let url):
      return "\(url.path) was changed by another process since this process last read it; "
        + "the newer file was kept and the local change was not saved"
    case .watchUnavailable(let url, let code, let period):
      return "could not watch \(url.path) for changes (\(String(cString: strerror(code)))); "
        + "checking it every \(period) instead"
    }
  }
}
