/// Why a TLS connection could not be made or used. Each case becomes
/// ``HTTPError/unreachable(url:reason:)-enum.case`` with a reason that names the cause
/// (``reason``) and, for a refusal, carries it typed (``refusal``), so a caller sees the same
/// typed error whichever transport ran the request.
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
  /// The certificate failed verification for another reason (OpenSSL's sentence and its
  /// `X509_V_ERR_*` code).
  case certificateRejected(String, code: Int)
  /// The handshake failed for a reason other than the certificates: no common protocol
  /// version or cipher, the connection reset or closed.
  case handshakeFailed(String)
  /// The connection failed after the handshake (a reset, a protocol error).
  case connectionFailed(String)
  /// The server refused the client's certificate, or its absence, with the TLS alert
  /// `alert` (one of ``TLSRefusal/clientCertificateAlerts``), during the handshake or, in TLS
  /// 1.3, at the first read after it. The detail is OpenSSL's words for the alert.
  case clientCertificateRefused(alert: Int, detail: String)
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
    case .certificateRejected(let detail, _): "certificate rejected: \(detail)"
    case .handshakeFailed(let detail): "TLS handshake failed: \(detail)"
    case .connectionFailed(let detail): "TLS connection failed: \(detail)"
    case .clientCertificateRefused(116, let detail):
      "the server requires a TLS client certificate (\(detail))"
    case .clientCertificateRefused(_, let detail):
      "the server refused the TLS client certificate (\(detail))"
    case .invalidConfiguration(let detail): "TLS configuration refused: \(detail)"
    }
  }

  /// The refusal this failure is, when it repeats on every attempt: a certificate refused
  /// either way, or a configuration OpenSSL refused (a bad or encrypted client key). Decided by
  /// the case, which the TLS layer chose from OpenSSL's codes, never by the words.
  var refusal: TLSRefusal? {
    switch self {
    case .certificateExpired: .certificateExpired
    case .certificateNotYetValid: .certificateNotYetValid
    case .certificateUntrusted: .certificateUntrusted
    case .certificateHostMismatch: .certificateHostMismatch
    case .certificateRejected(_, let code): .certificateRejected(verifyResult: code)
    case .clientCertificateRefused(let alert, _): .clientCertificateRefused(alert: alert)
    case .invalidConfiguration: .invalidConfiguration
    case .libraryUnavailable, .handshakeFailed, .connectionFailed: nil
    }
  }

  /// The reason an ``HTTPError`` carries: the words and the typed refusal.
  var failureReason: FailureReason {
    FailureReason(reason, tlsRefusal: refusal)
  }

  /// The ``HTTPError`` a request to `url` fails with.
  func httpError(url: String) -> HTTPError {
    .unreachable(url: url, reason: failureReason)
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
    default: .certificateRejected(description, code: code)
    }
  }
}
