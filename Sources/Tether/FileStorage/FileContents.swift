import Foundation

/// What the bytes of a file mean to a file key, before anything is moved or reported: the one
/// place where the size cap, the empty-file rule and decoding meet.
///
/// Everything here is pure (no file system, no locks), so the libFuzzer harness in
/// Tests/Fuzz/FileStorageDecoding runs exactly this code on arbitrary bytes.
enum FileContents {
  /// How the bytes of a file were understood.
  enum Outcome<Value> {
    /// No bytes: the file counts as missing, and holders use their default.
    case empty
    /// The bytes decoded.
    case value(Value)
    /// More bytes than the key allows; nothing was decoded.
    case tooLarge(size: Int)
    /// The bytes did not decode; the error says why.
    case undecodable(any Error)
  }

  /// Interprets `data`, the whole contents of a file, for a key that reads at most
  /// `maximumSize` bytes and decodes with `decode`.
  static func interpret<Value>(
    _ data: Data, maximumSize: Int, decode: (Data) throws -> Value
  ) -> Outcome<Value> {
    if data.isEmpty { return .empty }
    if data.count > maximumSize { return .tooLarge(size: data.count) }
    do {
      return .value(try decode(data))
    } catch {
      return .undecodable(error)
    }
  }

  /// The name an undecodable file is moved to: `NAME.corrupt-TIMESTAMP`, then `-2`, `-3`, …
  /// for the `attempt`-th try when an earlier name is taken.
  static func preservedName(of path: String, stamp: String, attempt: Int) -> String {
    attempt <= 1 ? "\(path).corrupt-\(stamp)" : "\(path).corrupt-\(stamp)-\(attempt)"
  }
}
