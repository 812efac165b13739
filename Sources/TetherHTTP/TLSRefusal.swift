/// Why TLS refused a connection in a way that repeats on every attempt: the server's
/// certificate failed verification, the server refused the client's certificate, or the
/// client's own TLS configuration cannot be used.
///
/// Tether never retries a refusal (neither ``HTTPRetryPolicy`` nor etcd's fail-over across
/// members): another attempt would fail the same way and only delay the error. It is decided
/// where TLS knows it (OpenSSL's verification result and the alert the server sent), never
/// from an error's words, and reaches callers as ``FailureReason/tlsRefusal`` of an
/// ``HTTPError/unreachable(url:reason:)-enum.case``:
///
/// ```swift
/// do {
///   _ = try await api.send(Status.current)
/// } catch let error where error.tlsRefusal == .certificateExpired {
///   print("the server's certificate has expired")
/// }
/// ```
public enum TLSRefusal: Hashable, Sendable, CustomStringConvertible {
  /// The server's certificate (or one in its chain) has expired.
  case certificateExpired
  /// The server's certificate (or one in its chain) is not valid yet.
  case certificateNotYetValid
  /// No trusted certificate authority vouches for the server's certificate: it is self-signed
  /// or its issuer is unknown.
  case certificateUntrusted
  /// The server's certificate is valid, but for another host name or IP address.
  case certificateHostMismatch
  /// The server's certificate failed verification for another reason; `verifyResult` is
  /// OpenSSL's `X509_V_ERR_*` code.
  case certificateRejected(verifyResult: Int)
  /// The server refused the client's certificate, or its absence, with the TLS alert
  /// `alert` (RFC 8446 §6: 42 bad_certificate, 48 unknown_ca, 116 certificate_required, …).
  case clientCertificateRefused(alert: Int)
  /// The client's TLS configuration cannot be used: a PEM that holds no certificate or key,
  /// a key that does not match its certificate, an encrypted key without its passphrase.
  case invalidConfiguration

  /// The TLS alerts a server sends when it refuses the client's certificate, or its absence:
  /// bad_certificate, unsupported_certificate, certificate_revoked, certificate_expired,
  /// certificate_unknown, unknown_ca, access_denied and certificate_required.
  static let clientCertificateAlerts: Set<Int> = [42, 43, 44, 45, 46, 48, 49, 116]

  /// Words for the refusal, such as `certificate expired`.
  public var description: String {
    switch self {
    case .certificateExpired: "certificate expired"
    case .certificateNotYetValid: "certificate not yet valid"
    case .certificateUntrusted: "certificate not trusted"
    case .certificateHostMismatch: "certificate is for another host"
    case .certificateRejected(let code): "certificate rejected (verification error \(code))"
    case .clientCertificateRefused(116): "the server requires a client certificate"
    case .clientCertificateRefused(let alert):
      "the server refused the client certificate (alert \(alert))"
    case .invalidConfiguration: "TLS configuration refused"
    }
  }
}
