/// One reference to an OpenSSL object that Tether owns (`SSL_CTX`, `SSL`, `BIO`, `X509`,
/// `EVP_PKEY`), freed with the matching `*_free` when the last Swift reference goes.
///
/// Wrap a pointer the moment a function that returns a new reference gives it
/// (``OpenSSLLibrary/CreateFunction``, a `PEM_read_bio_*`); a pointer an object only lends
/// (``OpenSSLLibrary/BorrowFunction``) is an ``OpenSSLBorrowed`` and never freed.
///
/// ```swift
/// let context = try OpenSSLObject<SSLContextKind>.adopt(library.ctxNew(method), library)
/// // SSL_set_bio takes the reference: hand it over so it is not freed twice.
/// library.setBIO(ssl.pointer, bio.transferOwnership(), bio.pointer)
/// ```
///
/// Not `Sendable`: its owner (``TLSContext``, ``TLSSession``) decides who may use it.
final class OpenSSLObject<Kind: OpenSSLObjectKind> {
  /// The C pointer, valid while this object lives (or while OpenSSL holds the reference
  /// handed over by ``transferOwnership()``).
  let pointer: OpaquePointer
  private let library: OpenSSLLibrary
  private var isOwned = true

  private init(pointer: OpaquePointer, library: OpenSSLLibrary) {
    self.pointer = pointer
    self.library = library
  }

  /// Takes ownership of `pointer` (a new reference OpenSSL just returned), or throws
  /// ``TLSFailure/invalidConfiguration(_:)`` with OpenSSL's reason when it is `nil`.
  static func adopt(
    _ pointer: OpaquePointer?, _ library: OpenSSLLibrary, failing operation: String
  ) throws(TLSFailure) -> OpenSSLObject {
    guard let pointer else {
      throw TLSFailure.invalidConfiguration(
        "\(operation) failed: \(library.takeErrorReason() ?? "no reason given")")
    }
    return OpenSSLObject(pointer: pointer, library: library)
  }

  /// Hands the reference to an OpenSSL call that takes it (`SSL_set_bio`); this object then
  /// frees nothing.
  func transferOwnership() -> OpaquePointer {
    isOwned = false
    return pointer
  }

  deinit {
    if isOwned { Kind.free(pointer, library) }
  }
}

/// A pointer an OpenSSL object lends (`SSL_CTX_get_cert_store`, `SSL_get0_param`), valid
/// while its owner lives and never freed.
struct OpenSSLBorrowed<Kind> {
  /// The C pointer.
  let pointer: OpaquePointer
}

/// How one kind of OpenSSL object is freed.
protocol OpenSSLObjectKind {
  /// Frees (drops one reference to) `pointer` with `library`'s function.
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary)
}

/// `SSL_CTX`: a configuration sessions are made from.
enum SSLContextKind: OpenSSLObjectKind {
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary) {
    library.ctxFree(pointer)
  }
}

/// `SSL`: one connection.
enum SSLConnectionKind: OpenSSLObjectKind {
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary) {
    library.sslFree(pointer)
  }
}

/// `BIO`: a source or sink of bytes (a PEM buffer, a socket).
enum BIOKind: OpenSSLObjectKind {
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary) {
    // BIO_free fails only for a NULL BIO or one still referenced elsewhere; neither can be
    // told apart or helped from a deinit.
    _ = library.bioFree(pointer)
  }
}

/// `X509`: a certificate.
enum CertificateKind: OpenSSLObjectKind {
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary) {
    library.certificateFree(pointer)
  }
}

/// `EVP_PKEY`: a private key.
enum PrivateKeyKind: OpenSSLObjectKind {
  static func free(_ pointer: OpaquePointer, _ library: OpenSSLLibrary) {
    library.privateKeyFree(pointer)
  }
}

/// `X509_STORE`: a context's trusted certificates (borrowed from the `SSL_CTX`).
enum CertificateStoreKind {}

/// `X509_VERIFY_PARAM`: a connection's verification settings (borrowed from the `SSL`).
enum VerifyParametersKind {}

/// An owned `SSL_CTX`.
typealias SSLContextObject = OpenSSLObject<SSLContextKind>
/// An owned `SSL`.
typealias SSLConnectionObject = OpenSSLObject<SSLConnectionKind>
/// An owned `BIO`.
typealias BIOObject = OpenSSLObject<BIOKind>
/// An owned `X509`.
typealias CertificateObject = OpenSSLObject<CertificateKind>
/// An owned `EVP_PKEY`.
typealias PrivateKeyObject = OpenSSLObject<PrivateKeyKind>
