/// Why a server could not be reached, in words, and, when TLS refused the connection, which
/// refusal it was: the `reason` of ``HTTPError/unreachable(url:reason:)-enum.case`` (and of etcd's
/// `EtcdError.unavailable(reason:)`).
///
/// It reads as its words (``description``) in `"\(reason)"` and in the error's description.
/// ``tlsRefusal`` is set by the TLS layer itself, never found in the words, so code that must
/// tell a refusal from a network failure asks it:
///
/// ```swift
/// catch .unreachable(_, let reason) where reason.tlsRefusal != nil {
///   print("TLS refused the connection: \(reason)")  // not retried: it would fail again
/// }
/// ```
///
/// The reason was a `String` before refusals were typed, and reads like one where code used
/// it so: a string literal or interpolation makes a reason without a refusal (so
/// `.unreachable(url: url, reason: "connection refused")` reads as before), two reasons are
/// equal when their words are (the refusal is derived from the same failure and is not
/// compared), and `contains(_:)`, `hasPrefix(_:)`, `hasSuffix(_:)` and `String`'s properties
/// (`reason.isEmpty`, `reason.count`) answer for the words. Where a `String` itself is needed,
/// use ``description``.
@dynamicMemberLookup
public struct FailureReason: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringInterpolation
{
  /// The words: what failed and why (`connection refused`, `certificate expired`).
  public var description: String
  /// The TLS refusal behind the failure, or `nil` when TLS did not refuse the connection
  /// (the network failed, the server closed, TLS was not used). A refusal repeats on every
  /// attempt, so Tether never retries it.
  public var tlsRefusal: TLSRefusal?

  /// A reason in `words`, with the TLS refusal behind it if there is one.
  public init(_ words: String, tlsRefusal: TLSRefusal? = nil) {
    description = words
    self.tlsRefusal = tlsRefusal
  }

  /// A reason in these words, without a TLS refusal.
  public init(stringLiteral words: String) {
    self.init(words)
  }

  /// A reason in these words, without a TLS refusal.
  public init(stringInterpolation: DefaultStringInterpolation) {
    self.init(String(stringInterpolation: stringInterpolation))
  }

  /// Whether the words are the same: the refusal is not compared, so an error built from the
  /// words alone equals the one a refusal threw.
  public static func == (lhs: FailureReason, rhs: FailureReason) -> Bool {
    lhs.description == rhs.description
  }

  /// Hashes the words, as `==` compares them.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(description)
  }

  /// A property of the words, as it read when the reason was a `String` (`reason.isEmpty`).
  public subscript<T>(dynamicMember keyPath: KeyPath<String, T>) -> T {
    description[keyPath: keyPath]
  }

  /// Whether the words contain `other`.
  public func contains(_ other: some StringProtocol) -> Bool {
    description.contains(other)
  }

  /// Whether the words begin with `prefix`.
  public func hasPrefix(_ prefix: String) -> Bool {
    description.hasPrefix(prefix)
  }

  /// Whether the words end with `suffix`.
  public func hasSuffix(_ suffix: String) -> Bool {
    description.hasSuffix(suffix)
  }
}
