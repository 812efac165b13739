/// Constants of OpenSSL's C API, the same in 1.1.1 and 3 (their headers agree on each).
extension OpenSSLLibrary {
  /// `SSL_ERROR_NONE`: the call succeeded.
  static let sslErrorNone: Int32 = 0
  /// `SSL_ERROR_SSL`: a protocol or verification failure; the error queue says which.
  static let sslErrorSSL: Int32 = 1
  /// `SSL_ERROR_WANT_READ`: call again when the socket is readable.
  static let sslErrorWantRead: Int32 = 2
  /// `SSL_ERROR_WANT_WRITE`: call again when the socket is writable.
  static let sslErrorWantWrite: Int32 = 3
  /// `SSL_ERROR_SYSCALL`: the BIO failed (``SocketBIO`` keeps the `errno`).
  static let sslErrorSyscall: Int32 = 5
  /// `SSL_ERROR_ZERO_RETURN`: the peer closed the TLS connection.
  static let sslErrorZeroReturn: Int32 = 6
  /// `SSL_VERIFY_PEER`: verify the server's certificate and fail the handshake if it fails.
  static let verifyPeer: Int32 = 0x01
  /// `X509_V_OK`: the certificate verified.
  static let verificationOK = 0
  /// `SSL_CTRL_MODE` (the `SSL_CTX_set_mode` macro).
  static let controlMode: Int32 = 33
  /// `SSL_CTRL_SET_TLSEXT_HOSTNAME` (the `SSL_set_tlsext_host_name` macro: SNI).
  static let controlSetTLSExtensionHostName: Int32 = 55
  /// `SSL_CTRL_CHAIN_CERT` (the `SSL_CTX_add1_chain_cert` macro with `larg` 1).
  static let controlChainCertificate: Int32 = 89
  /// `SSL_CTRL_SET_MIN_PROTO_VERSION` (the `SSL_CTX_set_min_proto_version` macro).
  static let controlSetMinimumProtocolVersion: Int32 = 123
  /// `TLS1_2_VERSION`.
  static let tls12Version = 0x0303
  /// `TLSEXT_NAMETYPE_host_name`.
  static let tlsExtensionNameTypeHostName = 0
  /// `SSL_MODE_ENABLE_PARTIAL_WRITE`: `SSL_write` returns after each record sent.
  static let modeEnablePartialWrite = 0x1
  /// `SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER`: a retried write may pass another address.
  static let modeAcceptMovingWriteBuffer = 0x2
  /// `SSL_OP_IGNORE_UNEXPECTED_EOF` (3.0 and later only): a TCP close without close_notify
  /// reads as a close.
  static let optionIgnoreUnexpectedEOF: UInt64 = 1 << 7
  /// `X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS`: `*` matches a whole label only.
  static let checkFlagNoPartialWildcards: UInt32 = 0x4
  /// `X509_CHECK_FLAG_NEVER_CHECK_SUBJECT`: the subject's CN is never taken for a host name,
  /// even in a certificate without a subjectAltName (RFC 6125 §6.4.4, as browsers do).
  static let checkFlagNeverCheckSubject: UInt32 = 0x20
  /// `BIO_TYPE_SOURCE_SINK`: a BIO at the end of a chain (ours talks to a socket).
  static let bioTypeSourceSink: Int32 = 0x0400
  /// `BIO_FLAGS_READ`: the retry is for a read.
  static let bioFlagRead: Int32 = 0x01
  /// `BIO_FLAGS_WRITE`: the retry is for a write.
  static let bioFlagWrite: Int32 = 0x02
  /// `BIO_FLAGS_RWS | BIO_FLAGS_SHOULD_RETRY`: what `BIO_clear_retry_flags` clears.
  static let bioFlagsRetryAll: Int32 = 0x0F
  /// `BIO_FLAGS_SHOULD_RETRY`: the operation would block; try again later.
  static let bioFlagShouldRetry: Int32 = 0x08
  /// `BIO_CTRL_EOF`: whether the BIO's source has ended.
  static let bioControlEndOfFile: Int32 = 2
  /// `BIO_CTRL_FLUSH`: write out anything buffered (ours buffers nothing).
  static let bioControlFlush: Int32 = 11
}
