/// One client configuration's TLS settings, made once and shared by every connection of that
/// configuration (an OpenSSL `SSL_CTX`): the system trust store plus any certificate
/// authorities the client adds, an optional client certificate for mutual TLS, TLS 1.2 or
/// later, and verification of the server's certificate always required.
///
/// ```swift
/// let context = try TLSContext(trustedCertificates: [caPEM])
/// let session = try TLSSession(context: context, descriptor: socket, host: "api.example.com")
/// ```
///
/// Immutable once made, so any thread may start sessions from it. Making one fails with
/// ``TLSFailure/libraryUnavailable(_:)`` where OpenSSL cannot be loaded (the caller falls
/// back to URLSession) and with ``TLSFailure/invalidConfiguration(_:)`` for a PEM that holds
/// no certificate or a key that does not match.
final class TLSContext: @unchecked Sendable {
  // @unchecked Sendable: `context` is configured in `init` and never changed after; OpenSSL
  // makes `SSL_new` on a shared, unchanging `SSL_CTX` safe from several threads (its
  // reference count and certificate store have their own locks).

  /// A client certificate and its private key, both PEM, for servers that require mutual
  /// TLS (etcd with client-certificate authentication). The certificate PEM may hold the
  /// intermediate certificates after the client's own.
  struct ClientIdentity: Hashable, Sendable, CustomReflectable {
    /// The client's certificate, then any intermediates, in PEM.
    var certificatePEM: String
    /// The certificate's private key in PEM, unencrypted or encrypted under
    /// `privateKeyPassphrase`.
    var privateKeyPEM: String
    /// The passphrase of an encrypted `privateKeyPEM`; `nil` for a key that is not encrypted
    /// (an encrypted one then fails at once, never prompting).
    var privateKeyPassphrase: String? = nil

    /// The certificate only: `dump` never shows the key or its passphrase.
    var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "certificatePEM": certificatePEM, "privateKeyPEM": "(redacted)",
          "privateKeyPassphrase": privateKeyPassphrase == nil ? "nil" : "(redacted)",
        ])
    }
  }

  /// The OpenSSL the context was made with; its sessions use it too.
  let library: OpenSSLLibrary
  /// The `SSL_CTX*`, freed with the context (sessions hold their own reference to it).
  let context: OpaquePointer

  /// Makes a context that trusts the system's certificate authorities and those in
  /// `trustedCertificates` (each a PEM string that may hold several certificates), and
  /// presents `clientIdentity` to servers that ask for one.
  ///
  /// An encrypted client key is decrypted with the identity's passphrase; without one it
  /// fails at once with ``TLSFailure/invalidConfiguration(_:)`` (OpenSSL's own passphrase
  /// prompt, which reads the terminal, is never used).
  ///
  /// `library` names the OpenSSL to load; tests name one that does not exist.
  init(
    trustedCertificates: [String] = [], clientIdentity: ClientIdentity? = nil,
    library names: OpenSSLLibrary.Names = .system
  ) throws(TLSFailure) {
    let loaded = names == .system ? OpenSSLLibrary.shared : OpenSSLLibrary.load(names)
    let library = try loaded.get()
    library.errorClear()
    guard let method = library.clientMethod(), let context = library.ctxNew(method) else {
      throw TLSFailure.libraryUnavailable(library.takeErrorReason() ?? "SSL_CTX_new failed")
    }
    self.library = library
    self.context = context
    // From here `deinit` frees `context` if a step below throws.
    guard library.ctxSetDefaultVerifyPaths(context) == 1 else {
      throw TLSFailure.invalidConfiguration(
        "the system trust store cannot be read: \(library.takeErrorReason() ?? "unknown")")
    }
    guard
      library.ctxControl(
        context, OpenSSLLibrary.controlSetMinimumProtocolVersion, OpenSSLLibrary.tls12Version,
        nil) == 1
    else {
      throw TLSFailure.invalidConfiguration("TLS 1.2 cannot be required")
    }
    // Partial writes: `SSL_write` reports each record as written, like `send(2)`. A moving
    // buffer: a retried write may pass the same bytes from another address (a Swift array).
    _ = library.ctxControl(
      context, OpenSSLLibrary.controlMode,
      OpenSSLLibrary.modeEnablePartialWrite | OpenSSLLibrary.modeAcceptMovingWriteBuffer, nil)
    // A peer that closes without close_notify ends the stream like a TCP close; HTTP's own
    // framing (Content-Length, chunked) tells a truncated answer, as on plain http.
    _ = library.ctxSetOptions(context, OpenSSLLibrary.optionIgnoreUnexpectedEOF)
    library.ctxSetVerify(context, OpenSSLLibrary.verifyPeer, nil)

    if !trustedCertificates.isEmpty {
      guard let store = library.ctxGetCertificateStore(context) else {
        throw TLSFailure.invalidConfiguration("the context has no certificate store")
      }
      for pem in trustedCertificates {
        let certificates = try Self.certificates(in: pem, library: library)
        defer { certificates.forEach { library.certificateFree($0) } }
        for certificate in certificates {
          // Adding one already there (the same CA twice) is not an error.
          _ = library.storeAddCertificate(store, certificate)
        }
        library.errorClear()
      }
    }
    if let clientIdentity {
      try Self.use(clientIdentity, in: context, library: library)
    }
  }

  deinit {
    library.ctxFree(context)
  }

  /// Every certificate in `pem`, in order (the caller frees them).
  private static func certificates(
    in pem: String, library: OpenSSLLibrary
  ) throws(TLSFailure)
    -> [OpaquePointer]
  {
    var pem = pem
    let certificates = pem.withUTF8 { bytes -> [OpaquePointer] in
      guard let bio = library.bioNewMemoryBuffer(bytes.baseAddress, Int32(bytes.count)) else {
        return []
      }
      defer { _ = library.bioFree(bio) }
      var certificates: [OpaquePointer] = []
      // A certificate is never encrypted: the callback refuses at once if OpenSSL asks.
      while let certificate = library.pemReadCertificate(bio, nil, refusePassphrase, nil) {
        certificates.append(certificate)
      }
      // The read past the last certificate queues "no start line".
      library.errorClear()
      return certificates
    }
    guard !certificates.isEmpty else {
      throw TLSFailure.invalidConfiguration("no PEM certificate found")
    }
    return certificates
  }

  /// The private key in `pem`, decrypted with `passphrase` when it is encrypted (the caller
  /// frees it). OpenSSL asks the passphrase callback only for an encrypted key; without a
  /// passphrase the callback refuses at once, so nothing ever prompts or waits on a terminal.
  private static func privateKey(
    in pem: String, passphrase: String?, library: OpenSSLLibrary
  ) throws(TLSFailure)
    -> OpaquePointer
  {
    var pem = pem
    let request = PassphraseRequest(passphrase: passphrase)
    let key = pem.withUTF8 { bytes -> OpaquePointer? in
      guard let bio = library.bioNewMemoryBuffer(bytes.baseAddress, Int32(bytes.count)) else {
        return nil
      }
      defer { _ = library.bioFree(bio) }
      return withExtendedLifetime(request) {
        library.pemReadPrivateKey(
          bio, nil, supplyPassphrase, Unmanaged.passUnretained(request).toOpaque())
      }
    }
    guard let key else {
      let detail = library.takeErrorReason() ?? "unreadable"
      switch (request.asked, passphrase) {
      case (true, nil):
        throw TLSFailure.invalidConfiguration(
          "the private key is encrypted and no passphrase was given")
      case (true, _):
        throw TLSFailure.invalidConfiguration(
          "the private key cannot be decrypted with the passphrase given (\(detail))")
      case (false, _):
        throw TLSFailure.invalidConfiguration("no PEM private key found (\(detail))")
      }
    }
    return key
  }

  private static func use(
    _ identity: ClientIdentity, in context: OpaquePointer, library: OpenSSLLibrary
  ) throws(TLSFailure) {
    let certificates = try certificates(in: identity.certificatePEM, library: library)
    defer { certificates.forEach { library.certificateFree($0) } }
    let key = try privateKey(
      in: identity.privateKeyPEM, passphrase: identity.privateKeyPassphrase, library: library)
    defer { library.privateKeyFree(key) }
    // SSL_CTX_use_certificate and _PrivateKey take their own references.
    guard library.ctxUseCertificate(context, certificates[0]) == 1 else {
      throw TLSFailure.invalidConfiguration(
        "the client certificate was refused: \(library.takeErrorReason() ?? "unknown")")
    }
    for intermediate in certificates.dropFirst() {
      // SSL_CTX_add1_chain_cert, a macro: SSL_CTX_ctrl(ctx, SSL_CTRL_CHAIN_CERT, 1, x509).
      _ = library.ctxControl(
        context, OpenSSLLibrary.controlChainCertificate, 1, UnsafeMutableRawPointer(intermediate))
    }
    guard library.ctxUsePrivateKey(context, key) == 1, library.ctxCheckPrivateKey(context) == 1
    else {
      throw TLSFailure.invalidConfiguration(
        "the private key does not match the client certificate (\(library.takeErrorReason() ?? "unknown"))"
      )
    }
  }
}

/// What ``supplyPassphrase`` reads and reports for one `PEM_read_bio_PrivateKey`: the
/// passphrase to give, if any, and whether OpenSSL asked (the key is encrypted). Used on one
/// thread, within that call.
private final class PassphraseRequest {
  let passphrase: [UInt8]?
  var asked = false

  init(passphrase: String?) {
    self.passphrase = passphrase.map { Array($0.utf8) }
  }
}

/// The passphrase callback for private keys: copies the ``PassphraseRequest``'s passphrase,
/// or fails (-1) when there is none or it does not fit OpenSSL's buffer.
private let supplyPassphrase: OpenSSLLibrary.PassphraseCallback = { buffer, size, _, context in
  guard let context else { return -1 }
  let request = Unmanaged<PassphraseRequest>.fromOpaque(context).takeUnretainedValue()
  request.asked = true
  guard let buffer, let passphrase = request.passphrase, passphrase.count <= Int(size) else {
    return -1
  }
  passphrase.withUnsafeBytes { bytes in
    UnsafeMutableRawPointer(buffer).copyMemory(
      from: bytes.baseAddress ?? UnsafeRawPointer(buffer), byteCount: bytes.count)
  }
  return Int32(passphrase.count)
}

/// A passphrase callback that always fails: for PEM that is never encrypted (certificates).
private let refusePassphrase: OpenSSLLibrary.PassphraseCallback = { _, _, _, _ in -1 }
