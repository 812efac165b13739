/// The oldest error OpenSSL queued on this thread: its packed code (`ERR_get_error`) and its
/// words (`ERR_reason_error_string`). What failed is decided from the code, the words are for
/// the error text.
struct OpenSSLError: Equatable {
  /// The packed code: library, reason (and in 1.1, function) in one number.
  let code: UInt
  /// `OpenSSL_version_num` of the library that queued it: the packing differs between 1.1
  /// and 3.
  let version: UInt
  /// OpenSSL's words for the reason, such as `sslv3 alert bad certificate`.
  let words: String

  /// `ERR_LIB_SSL`: the error came from libssl (not libcrypto or the system).
  static let librarySSL: UInt = 20
  /// `SSL_AD_REASON_OFFSET`: libssl's reason for a TLS alert received is the alert plus this.
  static let alertReasonOffset: UInt = 1000

  /// The library that queued the error (`ERR_GET_LIB`), or `nil` for a system error
  /// (OpenSSL 3's `ERR_SYSTEM_FLAG`, whose reason is an `errno`).
  var library: UInt? {
    if version >= 0x3000_0000 {
      if code & (1 << 31) != 0 { return nil }
      return (code >> 23) & 0xFF
    }
    return (code >> 24) & 0xFF
  }

  /// The reason (`ERR_GET_REASON`): 3 keeps 23 bits for it, 1.1 kept 12.
  var reason: UInt {
    version >= 0x3000_0000 ? code & 0x7F_FFFF : code & 0xFFF
  }

  /// Whether this is libcrypto's `X509_R_CERT_ALREADY_IN_HASH_TABLE` (library `ERR_LIB_X509`,
  /// 11; reason 101): a certificate added to a store that holds it already.
  var isCertificateAlreadyInStore: Bool {
    library == 11 && reason == 101
  }

  /// The TLS alert the peer sent, when this error is libssl's report of one (reasons 1000 to
  /// 1255: `SSL_R_SSLV3_ALERT_BAD_CERTIFICATE` is 1042, `SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED`
  /// 1116), or `nil`.
  var receivedAlert: Int? {
    guard library == Self.librarySSL,
      (Self.alertReasonOffset..<Self.alertReasonOffset + 256).contains(reason)
    else { return nil }
    return Int(reason - Self.alertReasonOffset)
  }
}

extension OpenSSLLibrary {
  /// Takes every error queued on this thread by OpenSSL and returns the oldest one, or `nil`.
  func takeError() -> OpenSSLError? {
    var first: OpenSSLError?
    while case let code = errorGet(), code != 0 {
      if first == nil {
        let words = errorReason(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
        first = OpenSSLError(code: code, version: version, words: words)
      }
    }
    return first
  }
}
