import Foundation
import TetherHTTP

/// Why an etcd request or an `.etcd` shared key failed.
///
/// It reads well in `"\(error)"` and `localizedDescription`, and never shows a password or an
/// auth token.
///
/// ```swift
/// do {
///   try await $flag.save()
/// } catch EtcdError.conflict(let key) {
///   print("\(key) changed elsewhere first; the newer value was loaded")
/// }
/// ```
public enum EtcdError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// No endpoint of the cluster answered (each was unreachable, timed out or without a
  /// leader, or refused by TLS); `reason` describes the last failure, and its `tlsRefusal`
  /// (TetherHTTP's `FailureReason`) says when TLS refused the connection, which the cluster
  /// does not retry.
  case unavailable(reason: FailureReason)
  /// A write was sent but its answer was lost (the connection died or timed out), so it may
  /// or may not have been committed. `.etcd` keys resolve this themselves before retrying.
  case outcomeUnknown(reason: String)
  /// A compare-and-swap save found that someone else changed `key` first. The `.etcd` keys
  /// load the newer value into every holder after this; the local change is not written.
  case conflict(key: String)
  /// etcd answered with an error: the HTTP status, the gRPC code and etcd's message.
  case server(status: Int, code: Int, message: String)
  /// The user name or password was refused, or the user lacks the permission (`message`).
  case authenticationFailed(message: String)
  /// The stored bytes of `key` could not be decoded as the key's value type.
  case undecodable(key: String, reason: String)
  /// An answer from etcd did not have the expected shape.
  case invalidResponse(String)
  /// The request was cancelled.
  case cancelled

  /// An ``unavailable(reason:)-enum.case`` whose reason is only words, with no TLS refusal
  /// behind it: the spelling from before reasons were typed, kept for source compatibility.
  public static func unavailable(reason: String) -> EtcdError {
    .unavailable(reason: FailureReason(reason))
  }

  /// The TLS refusal that made the cluster unavailable (a member's certificate refused, the
  /// client's certificate refused by the members, the client's TLS configuration unusable),
  /// or `nil`. The cluster answers such a failure at once instead of failing over until its
  /// `timeout`: every attempt would be refused the same way.
  public var tlsRefusal: TLSRefusal? {
    if case .unavailable(let reason) = self { return reason.tlsRefusal }
    return nil
  }

  /// A sentence saying what went wrong.
  public var description: String {
    switch self {
    case .unavailable(let reason): "etcd is unavailable: \(reason)"
    case .outcomeUnknown(let reason):
      "an etcd write may or may not have been committed: \(reason)"
    case .conflict(let key):
      "etcd key \(key) was changed by someone else first; the newer value was loaded"
    case .server(let status, let code, let message):
      "etcd answered HTTP \(status) (gRPC code \(code)): \(message)"
    case .authenticationFailed(let message): "etcd authentication failed: \(message)"
    case .undecodable(let key, let reason): "cannot decode the value of etcd key \(key): \(reason)"
    case .invalidResponse(let reason): "unexpected answer from etcd: \(reason)"
    case .cancelled: "the etcd request was cancelled"
    }
  }

  /// The same sentence as ``description``.
  public var errorDescription: String? { description }

  /// Whether no endpoint took the request (so a write was not proposed).
  var isUnavailable: Bool {
    if case .unavailable = self { true } else { false }
  }

  /// Whether a later attempt may succeed (the cluster was unreachable or the outcome is
  /// unknown), as opposed to an answer that will not change.
  var isTransient: Bool {
    switch self {
    case .unavailable, .outcomeUnknown: true
    case .server(let status, _, _): status == 503 || status == 504
    default: false
    }
  }
}
