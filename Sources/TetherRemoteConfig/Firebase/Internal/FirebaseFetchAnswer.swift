import Foundation
import TetherHTTP

/// What a Firebase fetch answer means, as a value read from the status, headers and body, with
/// no state and no I/O, as the Firebase SDKs read it. The ``FirebaseConfigSource`` records what
/// it implies (versions, ETag, back-off); a failure leaves the active values as they are.
///
/// - 200 with `entries` is a template (`NO_TEMPLATE` and `EMPTY_CONFIG`: an empty one);
///   entries are strings, which the typed keys decode;
/// - 200 with `state: NO_CHANGE`, and 304, are "not modified";
/// - 200 with `state: INSTANCE_STATE_UNSPECIFIED` is a server error, as 500;
/// - 429, 500, 503 and 504 are throttling;
/// - 200 whose body is `{"error": …}` is a failed fetch (the SDKs check for it), not an empty
///   template; a 200 body that is not a JSON object is malformed;
/// - any other status is the error ``error(status:retryAfter:)`` names.
package enum FirebaseFetchAnswer: Sendable, Equatable {
  /// A template: its entries, its `templateVersion` and the answer's ETag, when valid.
  case template(entries: [String: JSONValue], version: Int?, etag: String?)
  /// Not modified since the ETag sent; the version and ETag, when the answer has them.
  case notModified(version: Int?, etag: String?)
  /// A throttling answer with its status and `Retry-After` in seconds, when sent.
  case throttling(status: Int, retryAfter: TimeInterval?)
  /// A failed fetch.
  case failure(RemoteConfigError)

  /// What `response` means.
  package init(_ response: HTTPResponseMessage) {
    var status = response.status
    var object: [String: JSONValue] = [:]
    if status == 200 {
      guard case .object(let parsed)? = try? JSONValue(parsing: response.body) else {
        self = .failure(.malformedJSON("a Firebase fetch answer is a JSON object"))
        return
      }
      object = parsed
      if case .object(let error)? = object["error"] {
        self = .failure(.source(Self.serviceError(error)))
        return
      }
      if object["state"] == .string("INSTANCE_STATE_UNSPECIFIED") { status = 500 }
      if object["state"] == .string("NO_CHANGE") { status = 304 }
    }
    if FirebaseFetchThrottle.isThrottling(status: status) {
      self = .throttling(status: status, retryAfter: response.retryAfter)
      return
    }
    guard status == 200 || status == 304 else {
      self = .failure(Self.error(status: status, retryAfter: response.retryAfter))
      return
    }
    let version = Self.templateVersion(object["templateVersion"])
    let etag = Self.validETag(response.header("etag"))
    if status == 304 {
      self = .notModified(version: version, etag: etag)
      return
    }
    var entries: [String: JSONValue] = [:]
    switch object["state"] {
    case .string("NO_TEMPLATE")?, .string("EMPTY_CONFIG")?: break
    default:
      if case .object(let values)? = object["entries"] { entries = values }
    }
    self = .template(entries: entries, version: version, etag: etag)
  }

  /// `{"code", "status", "message"}` as the source's error.
  private static func serviceError(_ error: [String: JSONValue]) -> FirebaseConfigSourceError {
    .serviceError(
      code: templateVersion(error["code"]),
      status: error["status"].flatMap { if case .string(let text) = $0 { text } else { nil } },
      message: error["message"].flatMap { if case .string(let text) = $0 { text } else { nil } })
  }

  /// `"42"` or `42` → 42, when it is a sane version number.
  package static func templateVersion(_ value: JSONValue?) -> Int? {
    let number: Int? =
      switch value {
      case .string(let text)?: Int(text)
      case .int(let value)?: value
      default: nil
      }
    return number.flatMap { $0 >= 0 ? $0 : nil }
  }

  /// The ETag as sent (Firebase's are not always quoted), when it is printable and bounded.
  package static func validETag(_ value: String?) -> String? {
    guard let value, !value.isEmpty, value.utf8.count <= 1024,
      value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
    else { return nil }
    return value
  }

  /// The config error for a status of any Firebase service that is neither success nor
  /// throttling.
  package static func error(status: Int, retryAfter: Double?) -> RemoteConfigError {
    switch status {
    case 401, 403: .unauthorized(status: status)
    case 429: .throttled(status: 429, retryAfter: retryAfter)
    case 500..<600: .serverError(status: status, retryAfter: retryAfter)
    default: .unexpectedStatus(status)
    }
  }
}
