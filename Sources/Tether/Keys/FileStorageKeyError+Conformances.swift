import Foundation

extension FileStorageKeyError: LocalizedError {
  /// The same text as `description`, naming the file, so `localizedDescription` says what
  /// failed.
  public var errorDescription: String? { description }
}

extension FileStorageKeyError: Equatable {
  /// Two errors are equal when they are the same case for the same file with equal payloads
  /// (an underlying error is compared by its debug description).
  public static func == (lhs: Self, rhs: Self) -> Bool { errorsAreEqual(lhs, rhs) }
}

extension ContinuationNotResumed: LocalizedError {
  var errorDescription: String? { description }
}
