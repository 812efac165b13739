/// Why a TLS connection could not be made or used. Each case becomes
/// ``HTTPError/unreachable(url:reason:)`` with a reason that names the cause (``reason``), so a
/// caller sees the same typed error whichever transport ran the request.
///
/// A certificate that fails verification is always one of these: never a crash, never a
/// connection that goes on unverified.
enum TLSFailure: Error, Equatable, Sendable {
  /// OpenSSL cannot be used in this process (not installed, older than 1.1.1, a function
  /// missing, or not Linux): the request fails with `HTTPError.unreachable`, whose reason
  /// names the fix (install OpenSSL, or opt into URLSession with TetherURLSession).
  case libraryUnavailable(String)
  /// The server's certificate (or one in its chain) has expired.
  case certificateExpired
  /// The server's certificate (or one in its chain) is not valid yet.
  case certificateNotYetValid
  /// No trusted certificate authority vouches for the server's certificate: it is
  /// self-signed or its issuer is unknown. The detail is OpenSSL's sentence.
  case certificateUntrusted(String)
  /// The certificate is valid but for another host name or IP address.
  case certificateHostMismatch
  /// The certificate failed verification for another reason (OpenSSL's sentence).
  case certificateRejected(String)
  /// The handshake failed for a reason other than the certificate: no common protocol
  /// version or cipher, an alert from the server, the connection reset or closed.
  case handshakeFailed(String)
  /// The connection failed after the handshake (a reset, a protocol error, an alert such
  /// as the server refusing a missing client certificate).
  case connectionFailed(String)
  /// The configuration was refused: a PEM that holds no certificate or key, a key that
  /// does not match its certificate.
  case invalidConfiguration(String)

  /// The reason an ``HTTPError`` gives, naming the cause in words.
  var reason: String {
    switch self {
    case .libraryUnavailable(let detail): "TLS could not be loaded (\(detail))"
    case .certificateExpired: "certificate expired"
    case .certificateNotYetValid: "certificate not yet valid"
    case .certificateUntrusted: "certificate not trusted (self-signed or unknown issuer)"
    case .certificateHostMismatch: "certificate is for another host"
    case .certificateRejected(let detail): "certificate rejected: \(detail)"
    case .handshakeFailed(let detail): "TLS handshake failed: \(detail)"
    case .connectionFailed(let detail): "TLS connection failed: \(detail)"
    case .invalidConfiguration(let detail): "TLS configuration refused: \(detail)"
    }
  }

  /// Whether an ``HTTPError/unreachable(url:reason:)`` with `reason` came from a failure that
  /// repeats on every attempt (the server's certificate refused, a configuration OpenSSL
  /// refused such as a bad or encrypted client key, or the server's alert refusing the
  /// client's certificate), so retrying it only delays the error.
  static func isPermanent(reason: String) -> Bool {
    if reason.hasPrefix("certificate ") || reason.hasPrefix("TLS configuration refused") {
      return true
    }
    guard reason.hasPrefix("TLS handshake failed") || reason.hasPrefix("TLS connection failed")
    else { return false }
    return clientCertificateAlerts.contains { reason.contains($0) }
  }

  /// OpenSSL's words for the alerts a server sends when it refuses the client's certificate
  /// (or its absence): `sslv3 alert bad certificate`, `tlsv13 alert certificate required`, ….
  private static let clientCertificateAlerts = [
    "alert bad certificate", "alert unsupported certificate", "alert certificate revoked",
    "alert certificate expired", "alert certificate unknown", "alert unknown ca",
    "alert access denied", "alert certificate required",
  ]

  /// The ``HTTPError`` a request to `url` fails with.
  func httpError(url: String) -> HTTPError {
    .unreachable(url: url, reason: reason)
  }

  /// The failure for a certificate verification result (`SSL_get_verify_result`, one of
  /// OpenSSL's `X509_V_ERR_*` codes), or `nil` for `X509_V_OK`.
  static func verification(_ code: Int, description: String) -> TLSFailure? {
    switch code {
    case 0: nil
    case 10: .certificateExpired  // X509_V_ERR_CERT_HAS_EXPIRED
    case 9: .certificateNotYetValid  // X509_V_ERR_CERT_NOT_YET_VALID
    // UNABLE_TO_GET_ISSUER_CERT, DEPTH_ZERO_SELF_SIGNED_CERT, SELF_SIGNED_CERT_IN_CHAIN,
    // UNABLE_TO_GET_ISSUER_CERT_LOCALLY, UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_UNTRUSTED.
    case 2, 18, 19, 20, 21, 27: .certificateUntrusted(description)
    case 62, 64: .certificateHostMismatch  // X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_MISMATCH
    default: .certificateRejected(description)
    }
  }
}

extension HTTPError {
  /// Whether this is a TLS refusal that repeats on every attempt (see
  /// ``TLSFailure/isPermanent(reason:)``): a certificate refused either way or a client key
  /// that cannot be used. Fail-over loops (etcd's) stop at it instead of retrying.
  package var isPermanentTLSRefusal: Bool {
    guard case .unreachable(_, let reason) = self else { return false }
    return TLSFailure.isPermanent(reason: reason)
  }

  /// Whether an unreachable error's `reason` names a permanent TLS refusal.
  package static func isPermanentTLSRefusal(reason: String) -> Bool {
    TLSFailure.isPermanent(reason: reason)
  }
}
