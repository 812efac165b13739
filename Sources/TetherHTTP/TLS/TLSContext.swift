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
  struct ClientIdentity: Hashable, Sendable {
    /// The client's certificate, then any intermediates, in PEM.
    var certificatePEM: String
    /// The certificate's private key in PEM, unencrypted.
    var privateKeyPEM: String
  }

  /// The OpenSSL the context was made with; its sessions use it too.
  let library: OpenSSLLibrary
  /// The `SSL_CTX*`, freed with the context (sessions hold their own reference to it).
  let context: OpaquePointer

  /// Makes a context that trusts the system's certificate authorities and those in
  /// `trustedCertificates` (each a PEM string that may hold several certificates), and
  /// presents `clientIdentity` to servers that ask for one.
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
      while let certificate = library.pemReadCertificate(bio, nil, nil, nil) {
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

  private static func privateKey(
    in pem: String, library: OpenSSLLibrary
  ) throws(TLSFailure)
    -> OpaquePointer
  {
    var pem = pem
    let key = pem.withUTF8 { bytes -> OpaquePointer? in
      guard let bio = library.bioNewMemoryBuffer(bytes.baseAddress, Int32(bytes.count)) else {
        return nil
      }
      defer { _ = library.bioFree(bio) }
      return library.pemReadPrivateKey(bio, nil, nil, nil)
    }
    guard let key else {
      throw TLSFailure.invalidConfiguration(
        "no PEM private key found (\(library.takeErrorReason() ?? "unreadable"))")
    }
    return key
  }

  private static func use(
    _ identity: ClientIdentity, in context: OpaquePointer, library: OpenSSLLibrary
  ) throws(TLSFailure) {
    let certificates = try certificates(in: identity.certificatePEM, library: library)
    defer { certificates.forEach { library.certificateFree($0) } }
    let key = try privateKey(in: identity.privateKeyPEM, library: library)
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
