import Foundation

/// Why a fetch, an activation or reading the cache failed.
///
/// After any of these the active values are unchanged.
public enum RemoteConfigError: Error, CustomStringConvertible {
  /// `fetch()` was called on a ``RemoteConfig`` without a source.
  case notConfigured
  /// The server answered 401 or 403. Polling stops; fix the credentials and start it again.
  case unauthorized(status: Int)
  /// The server asked the client to slow down (429), optionally saying for how many seconds.
  case throttled(status: Int, retryAfter: TimeInterval?)
  /// The server failed (5xx), optionally saying after how many seconds to retry.
  case serverError(status: Int, retryAfter: TimeInterval?)
  /// The server answered with a status that is neither success, 304 nor one of the above.
  case unexpectedStatus(Int)
  /// The fetch took longer than ``RemoteConfigSettings/fetchTimeout``.
  case timedOut(after: TimeInterval)
  /// The source could not be reached (connection refused, no route, DNS failure…).
  case connectionFailed(String)
  /// The connection ended before the whole body arrived.
  case truncatedBody(expected: Int?, received: Int)
  /// The body was larger than the source's size limit; receiving stopped at the limit.
  case responseTooLarge(limit: Int)
  /// The document is not valid JSON.
  case malformedJSON(String)
  /// The document is valid JSON but not an object of entries.
  case notAnObject(found: String)
  /// A local config file could not be read.
  case fileUnreadable(path: String, reason: String)
  /// The on-disk cache could not be read; it was moved aside to `movedTo` (when moving worked)
  /// and the config started without it.
  case corruptCache(movedTo: String?, reason: String)
  /// The on-disk cache could not be written; the activation itself succeeded.
  case cacheWriteFailed(String)
  /// A custom source failed with its own error.
  case source(any Error)

  /// How long the server asked the client to wait, if it did.
  public var retryAfter: TimeInterval? {
    switch self {
    case .throttled(_, let retryAfter), .serverError(_, let retryAfter): retryAfter
    default: nil
    }
  }

  /// Whether this failure means the server is asking for less traffic (429 or `Retry-After`).
  public var isThrottling: Bool {
    switch self {
    case .throttled: true
    case .serverError(_, let retryAfter): retryAfter != nil
    default: false
    }
  }

  /// A sentence saying what went wrong.
  public var description: String {
    switch self {
    case .notConfigured: "remote config has no source; call configure(source:) first"
    case .unauthorized(let status):
      "the config server refused the credentials (HTTP \(status)); polling, if it was running, "
        + "stops until the value is fetched again"
    case .throttled(let status, let retryAfter):
      "the config server is throttling requests (HTTP \(status))" + Self.after(retryAfter)
    case .serverError(let status, let retryAfter):
      "the config server failed (HTTP \(status))" + Self.after(retryAfter)
    case .unexpectedStatus(let status): "the config server answered HTTP \(status)"
    case .timedOut(let seconds): "the fetch timed out after \(seconds) s"
    case .connectionFailed(let reason): "could not reach the config source: \(reason)"
    case .truncatedBody(let expected, let received):
      "the response ended after \(received) of \(expected.map(String.init) ?? "?") bytes"
    case .responseTooLarge(let limit): "the response is larger than the \(limit)-byte limit"
    case .malformedJSON(let reason): "the config document is not valid JSON: \(reason)"
    case .notAnObject(let found): "the config document is a JSON \(found), not an object"
    case .fileUnreadable(let path, let reason): "cannot read config file \(path): \(reason)"
    case .corruptCache(let movedTo, let reason):
      "the config cache is unreadable (\(reason))"
        + (movedTo.map { "; moved aside to \($0)" } ?? "")
    case .cacheWriteFailed(let reason): "could not write the config cache: \(reason)"
    case .source(let error): "the config source failed: \(error)"
    }
  }

  private static func after(_ retryAfter: TimeInterval?) -> String {
    retryAfter.map { "; retry after \($0) s" } ?? ""
  }

  init(_ error: any Error) {
    self = (error as? RemoteConfigError) ?? .source(error)
  }
}
