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
/// ``TLSFailure/libraryUnavailable(_:)`` where OpenSSL cannot be loaded (the request then
/// fails with a typed reason; there is no fallback) and with ``TLSFailure/invalidConfiguration(_:)`` for a PEM that holds
/// no certificate or a key that does not match.
final class TLSContext: @unchecked Sendable {
  // @unchecked Sendable: `handle` is configured in `init` and never changed after; OpenSSL
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
  /// The `SSL_CTX`, freed with the context (sessions hold their own reference to it).
  let handle: SSLContextObject

  /// Makes a context that trusts the system's certificate authorities and those in
  /// `trustedCertificates` (each a PEM string that may hold several certificates), and
  /// presents `clientIdentity` to servers that ask for one.
  ///
  /// An encrypted client key is decrypted with the identity's passphrase; without one it
  /// fails at once with ``TLSFailure/invalidConfiguration(_:)`` (OpenSSL's own passphrase
  /// prompt, which reads the terminal, is never used). Every OpenSSL call's result is
  /// checked: one that fails throws, naming the step.
  ///
  /// Reads the system trust store (50–100 ms): build it off Swift's cooperative pool, as
  /// ``TLSContextCache/contextOffThePool(for:)`` does.
  ///
  /// `library` names the OpenSSL to load; tests name one that does not exist.
  init(
    trustedCertificates: [String] = [], clientIdentity: ClientIdentity? = nil,
    library names: OpenSSLLibrary.Names = .system
  ) throws(TLSFailure) {
    let loaded = names == .system ? OpenSSLLibrary.shared : OpenSSLLibrary.load(names)
    let library = try loaded.get()
    library.errorClear()
    guard let method = library.clientMethod(), let made = library.ctxNew(method) else {
      throw TLSFailure.libraryUnavailable(library.takeErrorReason() ?? "SSL_CTX_new failed")
    }
    let context = try SSLContextObject.adopt(made, library, failing: "SSL_CTX_new")
    self.library = library
    self.handle = context
    try Self.configure(context, library: library)
    if !trustedCertificates.isEmpty {
      try Self.trust(trustedCertificates, in: context, library: library)
    }
    if let clientIdentity {
      try Self.use(clientIdentity, in: context, library: library)
    }
  }

  /// The settings every context has: the system store, TLS 1.2 or later, partial writes,
  /// verification required.
  private static func configure(
    _ context: SSLContextObject, library: OpenSSLLibrary
  ) throws(TLSFailure) {
    guard library.ctxSetDefaultVerifyPaths(context.pointer) == 1 else {
      throw TLSFailure.invalidConfiguration(
        "the system trust store cannot be read: \(library.takeErrorReason() ?? "unknown")")
    }
    // SSL_CTX_set_min_proto_version, a macro over SSL_CTX_ctrl in 1.1 and 3 alike.
    guard
      library.ctxControl(
        context.pointer, OpenSSLLibrary.controlSetMinimumProtocolVersion,
        OpenSSLLibrary.tls12Version, nil) == 1
    else {
      throw TLSFailure.invalidConfiguration("TLS 1.2 cannot be required")
    }
    // Partial writes: `SSL_write` reports each record as written, like `send(2)`. A moving
    // buffer: a retried write may pass the same bytes from another address (a Swift array).
    // SSL_CTX_set_mode (a macro) returns the mode now set.
    let mode = OpenSSLLibrary.modeEnablePartialWrite | OpenSSLLibrary.modeAcceptMovingWriteBuffer
    guard library.ctxControl(context.pointer, OpenSSLLibrary.controlMode, mode, nil) & mode == mode
    else {
      throw TLSFailure.invalidConfiguration("partial writes cannot be enabled")
    }
    if library.hasIgnoreUnexpectedEOF {
      // A peer that closes without close_notify ends the stream like a TCP close; HTTP's own
      // framing (Content-Length, chunked) tells a truncated answer, as on plain http. (1.1
      // has no such option: ``TLSSession`` reads its report of that close as a close.)
      let option = OpenSSLLibrary.optionIgnoreUnexpectedEOF
      guard library.ctxSetOptions(context.pointer, option) & option == option else {
        throw TLSFailure.invalidConfiguration("a close without close_notify cannot be allowed")
      }
    }
    library.ctxSetVerify(context.pointer, OpenSSLLibrary.verifyPeer, nil)
  }

  /// Adds every certificate of `pems` to the context's trust store.
  private static func trust(
    _ pems: [String], in context: SSLContextObject, library: OpenSSLLibrary
  ) throws(TLSFailure) {
    guard let store = library.ctxGetCertificateStore(context.pointer) else {
      throw TLSFailure.invalidConfiguration("the context has no certificate store")
    }
    let borrowed = OpenSSLBorrowed<CertificateStoreKind>(pointer: store)
    for pem in pems {
      for certificate in try certificates(in: pem, library: library) {
        library.errorClear()
        // X509_STORE_add_cert takes its own reference. Adding one already there (the same CA
        // twice) succeeds in 1.1.1 and 3; a failure with a reason is a real one.
        guard library.storeAddCertificate(borrowed.pointer, certificate.pointer) == 1 else {
          let error = library.takeError()
          if error?.isCertificateAlreadyInStore == true { continue }
          throw TLSFailure.invalidConfiguration(
            "a trusted certificate was refused: \(error?.words ?? "unknown")")
        }
      }
    }
  }

  /// Every certificate in `pem`, in order.
  private static func certificates(
    in pem: String, library: OpenSSLLibrary
  ) throws(TLSFailure) -> [CertificateObject] {
    let bio = try MemoryBIO(pem, library: library)
    var certificates: [CertificateObject] = []
    // A certificate is never encrypted: the callback refuses at once if OpenSSL asks.
    while let certificate = library.pemReadCertificate(bio.pointer, nil, refusePassphrase, nil) {
      certificates.append(try .adopt(certificate, library, failing: "PEM_read_bio_X509"))
    }
    // The read past the last certificate queues "no start line".
    library.errorClear()
    guard !certificates.isEmpty else {
      throw TLSFailure.invalidConfiguration("no PEM certificate found")
    }
    return certificates
  }

  /// The private key in `pem`, decrypted with `passphrase` when it is encrypted. OpenSSL asks
  /// the passphrase callback only for an encrypted key; without a passphrase the callback
  /// refuses at once, so nothing ever prompts or waits on a terminal.
  private static func privateKey(
    in pem: String, passphrase: String?, library: OpenSSLLibrary
  ) throws(TLSFailure) -> PrivateKeyObject {
    let bio = try MemoryBIO(pem, library: library)
    let request = PassphraseRequest(passphrase: passphrase)
    let key = withExtendedLifetime(request) {
      library.pemReadPrivateKey(
        bio.pointer, nil, supplyPassphrase, Unmanaged.passUnretained(request).toOpaque())
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
    return try .adopt(key, library, failing: "PEM_read_bio_PrivateKey")
  }

  private static func use(
    _ identity: ClientIdentity, in context: SSLContextObject, library: OpenSSLLibrary
  ) throws(TLSFailure) {
    let certificates = try certificates(in: identity.certificatePEM, library: library)
    let key = try privateKey(
      in: identity.privateKeyPEM, passphrase: identity.privateKeyPassphrase, library: library)
    // SSL_CTX_use_certificate, _PrivateKey and add1_chain_cert take their own references.
    guard library.ctxUseCertificate(context.pointer, certificates[0].pointer) == 1 else {
      throw TLSFailure.invalidConfiguration(
        "the client certificate was refused: \(library.takeErrorReason() ?? "unknown")")
    }
    for intermediate in certificates.dropFirst() {
      // SSL_CTX_add1_chain_cert, a macro: SSL_CTX_ctrl(ctx, SSL_CTRL_CHAIN_CERT, 1, x509).
      guard
        library.ctxControl(
          context.pointer, OpenSSLLibrary.controlChainCertificate, 1,
          UnsafeMutableRawPointer(intermediate.pointer)) == 1
      else {
        throw TLSFailure.invalidConfiguration(
          "an intermediate certificate was refused: \(library.takeErrorReason() ?? "unknown")")
      }
    }
    guard library.ctxUsePrivateKey(context.pointer, key.pointer) == 1,
      library.ctxCheckPrivateKey(context.pointer) == 1
    else {
      throw TLSFailure.invalidConfiguration(
        "the private key does not match the client certificate "
          + "(\(library.takeErrorReason() ?? "unknown"))")
    }
  }
}

/// A memory BIO over its own copy of some PEM text: `BIO_new_mem_buf` reads the bytes in
/// place, so they live as long as the BIO.
private final class MemoryBIO {
  private let bytes: UnsafeMutableRawBufferPointer
  private var bio: BIOObject?

  init(_ text: String, library: OpenSSLLibrary) throws(TLSFailure) {
    let utf8 = Array(text.utf8)
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, utf8.count), alignment: 1)
    bytes.copyBytes(from: utf8)
    self.bytes = bytes
    do throws(TLSFailure) {
      let bio = try BIOObject.adopt(
        library.bioNewMemoryBuffer(bytes.baseAddress, Int32(clamping: utf8.count)), library,
        failing: "BIO_new_mem_buf")
      self.bio = bio
      pointer = bio.pointer
    } catch {
      bytes.deallocate()
      throw error
    }
  }

  /// The `BIO*`, valid while this object lives.
  let pointer: OpaquePointer

  deinit {
    bio = nil  // BIO_free before the bytes it reads go
    bytes.deallocate()
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
