extension TLSFailure {
  /// Whether establishing a connection would fail the same way on every attempt: the server's
  /// certificate refused, a configuration OpenSSL refused (a bad or encrypted client key), or
  /// the server refusing the client's certificate. Decided by the failure's case, so the pool
  /// never retries such a connect, whatever words the failure carries.
  ///
  /// The one exception is the server's alert refusing the client's certificate: OpenSSL
  /// reports it only as a handshake or connection failure, and ``TLSFailure`` tells those
  /// apart from a reset by the alert's name (``TLSFailure/isPermanent(reason:)``).
  var isRefusal: Bool {
    switch self {
    case .certificateExpired, .certificateNotYetValid, .certificateUntrusted,
      .certificateHostMismatch, .certificateRejected, .invalidConfiguration:
      true
    case .handshakeFailed, .connectionFailed:
      TLSFailure.isPermanent(reason: reason)
    case .libraryUnavailable:
      false
    }
  }
}
