#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS over one connected, non-blocking TCP socket (an OpenSSL `SSL`), stepped by a
/// level-triggered event loop: each call does what it can without blocking and says what it
/// waits for.
///
/// ```swift
/// // On readiness of the socket:
/// switch session.handshake() {
/// case .done: // send the request with write(_:)
/// case .wantRead: loop.setInterest(fd, token: token, read: true, write: false)
/// case .wantWrite: loop.setInterest(fd, token: token, read: false, write: true)
/// case .failed(let failure): fail(failure.httpError(url: origin))
/// }
/// ```
///
/// - The host: SNI carries a host name (never an IP literal), and the certificate's
///   subjectAltName must list that name, or that IP address when `host` is one (`127.0.0.1`,
///   `::1`, `[::1]`). A name only in the subject's CN does not count (RFC 6125).
/// - ALPN offers `http/1.1` only.
/// - After `.wantRead`/`.wantWrite`, call the same method again, with the same bytes for a
///   write, when the socket is ready for what it asked; a read may want a write (and the
///   other way round) while TLS updates keys.
/// - ``read(into:)`` returns at most one TLS record, and the rest of the socket's bytes stay
///   in the kernel (``SocketBIO`` reads no further ahead), so readiness stays true for them.
///   Bytes already decrypted do not make the socket readable: see ``bufferedByteCount``.
/// - Bytes go through ``SocketBIO``: `send` with `MSG_NOSIGNAL` and `recv`, one system call
///   each, so a peer that has gone fails a write with EPIPE and never raises `SIGPIPE`.
/// - Right after the handshake a TLS 1.3 server sends session tickets: an idle connection's
///   socket turns readable with no HTTP byte for it. A read then returns `.wantRead`, which
///   means "still idle", not "closed"; only `.closed`, `.failed` or `.bytes` end an idle
///   connection.
///
/// The session does not own the socket: ``close()`` sends TLS's close_notify and frees the
/// session; the caller closes the descriptor after it. Confined to one thread at a time
/// (the connection's loop); not `Sendable`.
final class TLSSession {
  /// What a handshake step came to.
  enum HandshakeResult: Equatable {
    /// The connection is encrypted and the server's certificate verified.
    case done
    /// Call again when the socket is readable.
    case wantRead
    /// Call again when the socket is writable.
    case wantWrite
    /// The handshake failed; the session is unusable.
    case failed(TLSFailure)
  }

  /// What a read came to.
  enum ReadResult: Equatable {
    /// This many decrypted bytes are at the start of the buffer.
    case bytes(Int)
    /// Nothing decrypted yet; call again when the socket is readable.
    case wantRead
    /// Call again when the socket is writable (TLS must send before it can read on).
    case wantWrite
    /// The server closed the connection (close_notify, or a TCP close without it).
    case closed
    /// The connection failed; the session is unusable.
    case failed(TLSFailure)
  }

  /// What a write came to.
  enum WriteResult: Equatable {
    /// This many of the bytes were encrypted and handed to the socket (at least one, unless
    /// the bytes were empty); call again with the rest.
    case wrote(Int)
    /// Call again, with the same bytes, when the socket is readable.
    case wantRead
    /// Call again, with the same bytes, when the socket is writable.
    case wantWrite
    /// The connection failed; the session is unusable.
    case failed(TLSFailure)
  }

  /// The configuration the session was started from (kept alive while the session is).
  let context: TLSContext
  /// The socket; the caller closes it after ``close()``.
  let descriptor: Int32
  /// The host the certificate must be for, without brackets.
  let host: String
  private let library: OpenSSLLibrary
  /// The `SSL`; `nil` once the session failed or closed.
  private var ssl: SSLConnectionObject?
  /// The session's bytes to and from the socket (`send` with `MSG_NOSIGNAL`, `recv`).
  private let transport: SocketBIO
  /// Whether ``handshake()`` has returned `.done`.
  private(set) var isHandshakeDone = false

  /// Starts TLS as a client on `descriptor` (connected, non-blocking) to `host`; nothing is
  /// sent until the first ``handshake()``.
  ///
  /// - Throws: ``TLSFailure/invalidConfiguration(_:)`` when OpenSSL refuses the host name
  ///   (for example one with a NUL) or runs out of memory.
  init(context: TLSContext, descriptor: Int32, host: String) throws(TLSFailure) {
    self.context = context
    let library = context.library
    self.library = library
    self.descriptor = descriptor
    let bare =
      host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    self.host = bare
    library.errorClear()
    let ssl = try SSLConnectionObject.adopt(
      library.sslNew(context.handle.pointer), library, failing: "SSL_new")
    transport = try SocketBIO(descriptor: descriptor, library: library)
    transport.attach(to: ssl)
    self.ssl = ssl
    if Self.isIPAddress(bare) {
      // RFC 6066: SNI never carries an IP address. The certificate must list the IP.
      guard let parameters = library.getParameters(ssl.pointer) else {
        throw TLSFailure.invalidConfiguration("the connection has no verification parameters")
      }
      let borrowed = OpenSSLBorrowed<VerifyParametersKind>(pointer: parameters)
      guard bare.withCString({ library.parametersSetIP(borrowed.pointer, $0) }) == 1 else {
        throw TLSFailure.invalidConfiguration("\(bare) is not an IP address OpenSSL accepts")
      }
    } else {
      let named = bare.withCString { name -> Bool in
        // SSL_set_tlsext_host_name, a macro over SSL_ctrl.
        let sni = library.control(
          ssl.pointer, OpenSSLLibrary.controlSetTLSExtensionHostName,
          OpenSSLLibrary.tlsExtensionNameTypeHostName, UnsafeMutableRawPointer(mutating: name))
        return sni == 1 && library.setHost(ssl.pointer, name) == 1
      }
      guard named else {
        throw TLSFailure.invalidConfiguration("\(bare) is not a host name OpenSSL accepts")
      }
      library.setHostFlags(
        ssl.pointer,
        OpenSSLLibrary.checkFlagNoPartialWildcards | OpenSSLLibrary.checkFlagNeverCheckSubject)
    }
    // ALPN's wire format: each protocol name preceded by its length.
    let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
    guard library.setALPNProtocols(ssl.pointer, alpn, UInt32(alpn.count)) == 0 else {
      throw TLSFailure.invalidConfiguration("ALPN cannot be set")
    }
  }

  /// The protocol the server chose with ALPN (`"http/1.1"`), or `nil` if it chose none
  /// (many servers that speak only HTTP/1.1 do not answer ALPN).
  var negotiatedProtocol: String? {
    guard let ssl else { return nil }
    var data: UnsafePointer<UInt8>?
    var length: UInt32 = 0
    library.getSelectedALPN(ssl.pointer, &data, &length)
    guard let data, length > 0 else { return nil }
    return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
  }

  /// Decrypted bytes OpenSSL holds for the next ``read(into:)`` (only when a read's buffer
  /// was smaller than a record). The socket is not readable for them: a loop that stops
  /// reading while this is above zero must read again without waiting for readiness.
  var bufferedByteCount: Int {
    guard let ssl else { return 0 }
    return Int(library.pending(ssl.pointer))
  }

  /// Takes the handshake as far as the socket allows; `.done` once the server's
  /// certificate is verified for ``host``. Calling it after `.done` returns `.done`.
  func handshake() -> HandshakeResult {
    guard let ssl else { return .failed(.handshakeFailed("the session is closed")) }
    if isHandshakeDone { return .done }
    switch call(ssl, { library.connect($0) }) {
    case .done:
      if let failure = verifiedPeerFailure(ssl) {
        free()
        return .failed(failure)
      }
      isHandshakeDone = true
      return .done
    case .wantRead: return .wantRead
    case .wantWrite: return .wantWrite
    case .failed(let code):
      let failure = handshakeFailure(code: code)
      free()
      return .failed(failure)
    }
  }

  /// Decrypts what has arrived into `buffer`.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
    guard let ssl else { return .failed(.connectionFailed("the session is closed")) }
    guard !buffer.isEmpty else { return .bytes(0) }
    switch call(ssl, { library.read($0, buffer.baseAddress, Int32(clamping: buffer.count)) }) {
    case .done(let count): return .bytes(Int(count))
    case .wantRead: return .wantRead
    case .wantWrite: return .wantWrite
    case .failed(OpenSSLLibrary.sslErrorZeroReturn): return .closed
    case .failed(OpenSSLLibrary.sslErrorSyscall)
    where transport.reachedEnd && transport.lastError == 0:
      // OpenSSL 1.1's report of a TCP close without close_notify (3 reports it as a close,
      // with SSL_OP_IGNORE_UNEXPECTED_EOF); HTTP's framing tells a truncated answer.
      library.errorClear()
      return .closed
    case .failed(let code):
      let failure = connectionFailure(code: code)
      free()
      return .failed(failure)
    }
  }

  /// Encrypts and sends as much of `bytes` as the socket takes.
  func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
    guard let ssl else { return .failed(.connectionFailed("the session is closed")) }
    // SSL_write's behaviour with zero bytes is undefined.
    guard !bytes.isEmpty else { return .wrote(0) }
    switch call(ssl, { library.write($0, bytes.baseAddress, Int32(clamping: bytes.count)) }) {
    case .done(let count): return .wrote(Int(count))
    case .wantRead: return .wantRead
    case .wantWrite: return .wantWrite
    case .failed(let code):
      let failure = connectionFailure(code: code)
      free()
      return .failed(failure)
    }
  }

  /// What one OpenSSL call on the session came to.
  private enum CallOutcome {
    /// The call returned this positive result.
    case done(Int32)
    case wantRead
    case wantWrite
    /// Any other `SSL_get_error` code (`SSL_ERROR_ZERO_RETURN` included).
    case failed(Int32)
  }

  /// Runs one `SSL_connect`, `SSL_read` or `SSL_write` the way OpenSSL asks: the thread's
  /// error queue emptied first (`SSL_get_error` reads it), the session's socket BIO named for
  /// the thread, and a result that is not positive classified by `SSL_get_error`.
  private func call(
    _ ssl: SSLConnectionObject, _ body: (OpaquePointer) -> Int32
  ) -> CallOutcome {
    library.errorClear()
    let result = transport.run { body(ssl.pointer) }
    if result > 0 { return .done(result) }
    switch library.getError(ssl.pointer, result) {
    case OpenSSLLibrary.sslErrorWantRead: return .wantRead
    case OpenSSLLibrary.sslErrorWantWrite: return .wantWrite
    case let code: return .failed(code)
    }
  }

  /// After a handshake OpenSSL called done: the failure if the server presented no
  /// certificate or it did not verify (`SSL_VERIFY_PEER` already refuses both; this checks
  /// OpenSSL's word rather than trusting it).
  private func verifiedPeerFailure(_ ssl: SSLConnectionObject) -> TLSFailure? {
    let peer = library.peerCertificate(ssl.pointer)
    guard let peer else { return .handshakeFailed("the server presented no certificate") }
    _ = try? CertificateObject.adopt(peer, library, failing: "SSL_get1_peer_certificate")
    let verification = library.getVerifyResult(ssl.pointer)
    guard verification == OpenSSLLibrary.verificationOK else {
      return TLSFailure.verification(
        verification, description: library.verifyErrorDescription(verification))
    }
    return nil
  }

  /// Sends close_notify if the socket takes it at once (it never waits for the server's)
  /// and frees the session. The descriptor stays open: the caller closes it. Safe to call
  /// more than once.
  func close() {
    guard let ssl else { return }
    if isHandshakeDone {
      library.errorClear()
      // Best effort, never waited for: 1 or 0 (close_notify sent) and -1 (the socket would
      // block or the peer has gone) all end the same way, with the session freed.
      _ = transport.run { library.shutdown(ssl.pointer) }
      library.errorClear()
    }
    free()
  }

  // MARK: - Private

  /// Frees the `SSL` (and the socket BIO it owns).
  private func free() {
    ssl = nil
  }

  private func handshakeFailure(code: Int32) -> TLSFailure {
    let systemError = transport.lastError
    let error = library.takeError()
    if let ssl {
      let verification = library.getVerifyResult(ssl.pointer)
      if let failure = TLSFailure.verification(
        verification, description: library.verifyErrorDescription(verification))
      {
        return failure
      }
    }
    if let failure = Self.alertFailure(error) { return failure }
    return .handshakeFailed(error?.words ?? Self.describe(code: code, errno: systemError))
  }

  private func connectionFailure(code: Int32) -> TLSFailure {
    let systemError = transport.lastError
    let error = library.takeError()
    if let failure = Self.alertFailure(error) { return failure }
    return .connectionFailed(error?.words ?? Self.describe(code: code, errno: systemError))
  }

  /// The failure an alert from the server means, by the alert's number: the server refusing
  /// the client's certificate (in TLS 1.3 it arrives at the first read after the handshake),
  /// or answering none of the protocols ALPN offered. `nil` for any other error.
  static func alertFailure(_ error: OpenSSLError?) -> TLSFailure? {
    guard let error, let alert = error.receivedAlert else { return nil }
    if TLSRefusal.clientCertificateAlerts.contains(alert) {
      return .clientCertificateRefused(alert: alert, detail: error.words)
    }
    if alert == 120 {
      // no_application_protocol: the server speaks none of ALPN's offer (only `http/1.1`).
      return .handshakeFailed(
        "the server refused HTTP/1.1 (ALPN: \(error.words)); it speaks only HTTP/2 or another "
          + "protocol")
    }
    return nil
  }

  /// Words for a failure OpenSSL's error queue says nothing about (a system call failed,
  /// or the peer closed mid-handshake).
  private static func describe(code: Int32, errno systemError: Int32) -> String {
    if code == OpenSSLLibrary.sslErrorSyscall || code == OpenSSLLibrary.sslErrorZeroReturn {
      if systemError != 0 { return String(cString: strerror(systemError)) }
      return "the server closed the connection"
    }
    return "OpenSSL error \(code)"
  }

  /// Whether `host` is an IPv4 or IPv6 literal.
  static func isIPAddress(_ host: String) -> Bool {
    var address = in6_addr()
    return inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
  }
}
