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
  /// The file or its directory could not be written (`errno` says why, for example `EACCES`,
  /// `ENOTDIR` or `ENOSPC`). The previous file, if any, is intact.
  case writeFailed(url: URL, errno: Int32)

  /// The file the error concerns.
  public var url: URL {
    switch self {
    case .decodingFailed(let url, _, _), .encodingFailed(let url, _), .readFailed(let url, _),
      .writeFailed(let url, _):
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
    case .writeFailed(let url, let code):
      return "could not write \(url.path): \(String(cString: strerror(code)))"
    }
  }
}
