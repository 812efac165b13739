import Foundation

/// The error `init(require:)` and `load()` throw when the key has no stored value.
///
/// ```swift
/// await #expect(throws: SharedLoadError.notFound(key: "\(key)")) {
///   _ = try await Shared(require: key)
/// }
/// ```
public enum SharedLoadError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The key loaded nothing: there is no stored value. `key` describes the key (`"\(key)"`).
  case notFound(key: String)

  /// A sentence naming the key.
  public var description: String {
    switch self {
    case .notFound(let key): "nothing is stored for \(key)"
    }
  }

  /// The same text as ``description``, for `localizedDescription`.
  public var errorDescription: String? { description }
}
