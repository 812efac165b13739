import Foundation
import Tether

extension RemoteConfigError: LocalizedError {
  /// The same text as `description`, so `localizedDescription` says what failed.
  public var errorDescription: String? { description }
}

extension RemoteConfigError: Equatable {
  /// Two errors are equal when they are the same case with equal payloads (a custom source's
  /// error is compared by its debug description), so tests can write
  /// `#expect(throws: RemoteConfigError.unauthorized(status: 401)) { ... }`.
  public static func == (lhs: Self, rhs: Self) -> Bool { errorsAreEqual(lhs, rhs) }
}

extension ConfigDecodingError: LocalizedError {
  /// The same text as `description`, naming the key, so `localizedDescription` says what
  /// failed.
  public var errorDescription: String? { description }
}
