#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system OpenSSL (1.1.1 or 3), opened at run time with ``DynamicLibrary`` and called
/// through C function pointers, so that building Tether needs no OpenSSL header, package or
/// link flag.
///
/// The file names tried, in order, are ``Names/candidates``: OpenSSL 3 (`libssl.so.3`), then
/// 1.1 (`libssl.so.1.1`, Amazon Linux 2, Ubuntu 20.04), then the unversioned development
/// names (`libssl.so`). Every symbol is looked up through libssl's handle, which also searches
/// the libcrypto libssl itself depends on, so the two libraries always come from one version.
/// Where the versions spell a function differently (`SSL_get1_peer_certificate` in 3,
/// `SSL_get_peer_certificate` in 1.1) the first name found wins.
///
/// Handles are wrapped as soon as OpenSSL returns them (see ``OpenSSLObject``); the raw
/// function pointers below never leave `TLS/`. Macros of the C API
/// (`SSL_CTX_set_min_proto_version`, `SSL_set_tlsext_host_name`, ...) are spelled through
/// ``ctxControl`` and ``control`` with the constants of `OpenSSLLibrary+Constants.swift`,
/// identical in 1.1 and 3. The libraries are never closed: the function pointers live as
/// long as the process.
///
/// Load it with ``shared`` (the system libraries, loaded once) or ``load(_:)``, which a test
/// gives names that do not exist to take the path where TLS cannot be loaded.
final class OpenSSLLibrary: @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable C function pointer, a number,
  // or the BIO_METHOD made once in `init` and never changed; OpenSSL 1.1 and 3 are safe to
  // call from several threads at once as long as one `SSL` is used by one thread at a time.

  /// The file names to `dlopen`.
  struct Names: Hashable, Sendable {
    /// libssl's file name, such as `libssl.so.3`.
    var ssl: String
    /// libcrypto's file name, such as `libcrypto.so.3`.
    var crypto: String

    /// The system OpenSSL: loading it tries each of ``candidates`` in turn.
    static let system = Names(ssl: "libssl.so.3", crypto: "libcrypto.so.3")

    /// The names ``system`` tries, newest first: OpenSSL 3, OpenSSL 1.1, then the
    /// unversioned names a development package installs (whichever version they point to).
    static let candidates = [
      system,
      Names(ssl: "libssl.so.1.1", crypto: "libcrypto.so.1.1"),
      Names(ssl: "libssl.so", crypto: "libcrypto.so"),
    ]
  }

  // MARK: - C function types

  /// `const SSL_METHOD *f(void)`: a static object, never freed.
  typealias MethodFunction = @convention(c) () -> OpaquePointer?
  /// `T *f(U *)` returning a new object, or a new reference, that the caller frees
  /// (`SSL_CTX_new`, `SSL_new`, `BIO_new`, `SSL_get1_peer_certificate`).
  typealias CreateFunction = @convention(c) (OpaquePointer?) -> OpaquePointer?
  /// `T *f(U *)` returning an object its argument owns, never freed by the caller
  /// (`SSL_CTX_get_cert_store`, `SSL_get0_param`).
  typealias BorrowFunction = @convention(c) (OpaquePointer?) -> OpaquePointer?
  /// `void f(T *)`: a destructor.
  typealias FreeFunction = @convention(c) (OpaquePointer?) -> Void
  /// `int f(T *)`.
  typealias StatusFunction = @convention(c) (OpaquePointer?) -> Int32
  /// `int f(T *, U *)`.
  typealias PairStatusFunction = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
  /// `long f(T *, int cmd, long larg, void *parg)`: `SSL_ctrl`, `SSL_CTX_ctrl`, a BIO's ctrl.
  typealias ControlFunction =
    @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
  /// `uint64_t SSL_CTX_set_options(SSL_CTX *, uint64_t)` (`unsigned long` in 1.1: the same
  /// 64 bits on every Linux Tether runs on).
  typealias SetOptionsFunction = @convention(c) (OpaquePointer?, UInt64) -> UInt64
  /// `void SSL_CTX_set_verify(SSL_CTX *, int, SSL_verify_cb)`.
  typealias SetVerifyFunction = @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?) -> Void
  /// `int f(T *, const char *)`.
  typealias SetStringFunction = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
  /// `void f(T *, unsigned int)`.
  typealias SetFlagsFunction = @convention(c) (OpaquePointer?, UInt32) -> Void
  /// `void f(T *, int)`: `BIO_set_init`, `BIO_set_flags`, `BIO_clear_flags`.
  typealias SetIntegerFunction = @convention(c) (OpaquePointer?, Int32) -> Void
  /// `int SSL_set_alpn_protos(SSL *, const unsigned char *, unsigned int)`.
  typealias SetALPNFunction =
    @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, UInt32) -> Int32
  /// `void SSL_get0_alpn_selected(const SSL *, const unsigned char **, unsigned int *)`.
  typealias GetALPNFunction =
    @convention(c) (
      OpaquePointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt32>?
    ) -> Void
  /// `int SSL_read(SSL *, void *, int)`.
  typealias ReadFunction = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Int32
  /// `int SSL_write(SSL *, const void *, int)`.
  typealias WriteFunction = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32) -> Int32
  /// `int SSL_get_error(const SSL *, int)`.
  typealias GetErrorFunction = @convention(c) (OpaquePointer?, Int32) -> Int32
  /// `long SSL_get_verify_result(const SSL *)`.
  typealias VerifyResultFunction = @convention(c) (OpaquePointer?) -> Int
  /// `int OPENSSL_init_ssl(uint64_t opts, const OPENSSL_INIT_SETTINGS *settings)`.
  typealias InitializeFunction = @convention(c) (UInt64, OpaquePointer?) -> Int32
  /// `void SSL_set_bio(SSL *, BIO *rbio, BIO *wbio)`: takes the caller's reference.
  typealias SetBIOFunction = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Void
  /// `int BIO_get_new_index(void)`.
  typealias NewIndexFunction = @convention(c) () -> Int32
  /// `BIO_METHOD *BIO_meth_new(int type, const char *name)`.
  typealias NewBIOMethodFunction =
    @convention(c) (Int32, UnsafePointer<CChar>?) -> OpaquePointer?
  /// `int read(BIO *, char *, int)`: a BIO method's read.
  typealias BIOReadCallback =
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32
  /// `int write(BIO *, const char *, int)`: a BIO method's write.
  typealias BIOWriteCallback =
    @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
  /// `int BIO_meth_set_read(BIO_METHOD *, read)`.
  typealias SetBIOReadFunction = @convention(c) (OpaquePointer?, BIOReadCallback?) -> Int32
  /// `int BIO_meth_set_write(BIO_METHOD *, write)`.
  typealias SetBIOWriteFunction = @convention(c) (OpaquePointer?, BIOWriteCallback?) -> Int32
  /// `int BIO_meth_set_ctrl(BIO_METHOD *, ctrl)`.
  typealias SetBIOControlFunction = @convention(c) (OpaquePointer?, ControlFunction?) -> Int32
  /// `unsigned long OpenSSL_version_num(void)`.
  typealias VersionFunction = @convention(c) () -> UInt
  /// `const char *X509_verify_cert_error_string(long)`.
  typealias ErrorStringFunction = @convention(c) (Int) -> UnsafePointer<CChar>?
  /// `unsigned long ERR_get_error(void)`.
  typealias GetErrorCodeFunction = @convention(c) () -> UInt
  /// `const char *ERR_reason_error_string(unsigned long)`.
  typealias ReasonStringFunction = @convention(c) (UInt) -> UnsafePointer<CChar>?
  /// `void ERR_clear_error(void)`.
  typealias ClearErrorsFunction = @convention(c) () -> Void
  /// `BIO *BIO_new_mem_buf(const void *, int)`: a new BIO the caller frees.
  typealias MemoryBIOFunction = @convention(c) (UnsafeRawPointer?, Int32) -> OpaquePointer?
  /// `int pem_password_cb(char *buffer, int size, int rwflag, void *u)`: writes the
  /// passphrase into `buffer` and returns its length, or returns -1 to fail.
  typealias PassphraseCallback =
    @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
  /// `T *PEM_read_bio_T(BIO *, T **, pem_password_cb *, void *)`: a new object the caller
  /// frees. Never pass a `nil` callback: OpenSSL's default one prompts on the terminal.
  typealias PEMReadFunction =
    @convention(c) (
      OpaquePointer?, UnsafeMutableRawPointer?, PassphraseCallback?, UnsafeMutableRawPointer?
    ) -> OpaquePointer?

  // MARK: - Functions

  /// `OpenSSL_version_num`'s answer: `0x30000000` and up for 3, `0x10101000` and up for 1.1.1.
  let version: UInt
  let clientMethod: MethodFunction  // TLS_client_method
  let ctxNew: CreateFunction  // SSL_CTX_new (takes the method)
  let ctxFree: FreeFunction  // SSL_CTX_free
  let ctxSetDefaultVerifyPaths: StatusFunction  // SSL_CTX_set_default_verify_paths
  let ctxGetCertificateStore: BorrowFunction  // SSL_CTX_get_cert_store
  let ctxControl: ControlFunction  // SSL_CTX_ctrl
  let ctxSetOptions: SetOptionsFunction  // SSL_CTX_set_options
  let ctxUseCertificate: PairStatusFunction  // SSL_CTX_use_certificate (takes a reference)
  let ctxUsePrivateKey: PairStatusFunction  // SSL_CTX_use_PrivateKey (takes a reference)
  let ctxCheckPrivateKey: StatusFunction  // SSL_CTX_check_private_key
  let ctxSetVerify: SetVerifyFunction  // SSL_CTX_set_verify (the callback is always NULL)
  let sslNew: CreateFunction  // SSL_new (takes the SSL_CTX)
  let sslFree: FreeFunction  // SSL_free (frees its BIO too)
  let setBIO: SetBIOFunction  // SSL_set_bio
  let control: ControlFunction  // SSL_ctrl
  let setHost: SetStringFunction  // SSL_set1_host
  let setHostFlags: SetFlagsFunction  // SSL_set_hostflags
  let getParameters: BorrowFunction  // SSL_get0_param
  let setALPNProtocols: SetALPNFunction  // SSL_set_alpn_protos (0 on success)
  let getSelectedALPN: GetALPNFunction  // SSL_get0_alpn_selected
  let connect: StatusFunction  // SSL_connect
  let read: ReadFunction  // SSL_read
  let write: WriteFunction  // SSL_write
  let getError: GetErrorFunction  // SSL_get_error
  let shutdown: StatusFunction  // SSL_shutdown
  let getVerifyResult: VerifyResultFunction  // SSL_get_verify_result
  let pending: StatusFunction  // SSL_pending: decrypted bytes held for the next SSL_read
  /// `SSL_get1_peer_certificate` (3) or `SSL_get_peer_certificate` (1.1): a new reference.
  let peerCertificate: CreateFunction
  let verifyErrorString: ErrorStringFunction  // X509_verify_cert_error_string
  let errorGet: GetErrorCodeFunction  // ERR_get_error
  let errorReason: ReasonStringFunction  // ERR_reason_error_string
  let errorClear: ClearErrorsFunction  // ERR_clear_error
  let bioNewMemoryBuffer: MemoryBIOFunction  // BIO_new_mem_buf
  let bioNew: CreateFunction  // BIO_new (takes the BIO_METHOD)
  let bioFree: StatusFunction  // BIO_free
  let bioSetInit: SetIntegerFunction  // BIO_set_init
  let bioSetFlags: SetIntegerFunction  // BIO_set_flags
  let bioClearFlags: SetIntegerFunction  // BIO_clear_flags
  let pemReadCertificate: PEMReadFunction  // PEM_read_bio_X509
  let pemReadPrivateKey: PEMReadFunction  // PEM_read_bio_PrivateKey
  let certificateFree: FreeFunction  // X509_free
  let privateKeyFree: FreeFunction  // EVP_PKEY_free
  let storeAddCertificate: PairStatusFunction  // X509_STORE_add_cert (takes a reference)
  let parametersSetIP: SetStringFunction  // X509_VERIFY_PARAM_set1_ip_asc
  /// The `BIO_METHOD` of ``SocketBIO``, made once per library and never freed.
  let socketMethod: OpaquePointer

  /// The system libraries, loaded the first time they are asked for; the failure says why
  /// none of ``Names/candidates`` can be used (not installed, too old, a function missing).
  static let shared: Result<OpenSSLLibrary, TLSFailure> = load(.system)

  /// Loads the libraries named `names` (``Names/system``: the first of ``Names/candidates``
  /// that loads). Each call opens them again (`dlopen` counts references and returns the same
  /// libraries); prefer ``shared``.
  static func load(_ names: Names) -> Result<OpenSSLLibrary, TLSFailure> {
    guard names == .system else { return loadOne(names) }
    var reasons: [String] = []
    for candidate in Names.candidates {
      switch loadOne(candidate) {
      case .success(let library): return .success(library)
      case .failure(.libraryUnavailable(let detail)): reasons.append(detail)
      case .failure(let failure): reasons.append(failure.reason)
      }
    }
    return .failure(.libraryUnavailable(reasons.joined(separator: "; ")))
  }

  private static func loadOne(_ names: Names) -> Result<OpenSSLLibrary, TLSFailure> {
    do throws(TLSFailure) {
      return .success(try OpenSSLLibrary(names))
    } catch {
      return .failure(error)
    }
  }

  /// Whether `version` (`OpenSSL_version_num`'s) is one Tether uses: 1.1.1 or later.
  static func isSupported(version: UInt) -> Bool { version >= 0x1010_1000 }

  private init(_ names: Names) throws(TLSFailure) {
    #if os(Linux)
    // libcrypto first, so that the error names the one that is missing; every symbol is then
    // looked up through libssl, whose own libcrypto answers the crypto ones.
    _ = try OpenSSLSymbols.open(names.crypto)
    let symbols = OpenSSLSymbols(library: try OpenSSLSymbols.open(names.ssl), name: names.ssl)
    let versionNumber = try symbols.function("OpenSSL_version_num", as: VersionFunction.self)
    version = versionNumber()
    guard Self.isSupported(version: version) else {
      throw TLSFailure.libraryUnavailable(
        "\(names.ssl) is OpenSSL 0x\(String(version, radix: 16)); 1.1.1 or later is required")
    }
    let initialize = try symbols.function("OPENSSL_init_ssl", as: InitializeFunction.self)
    guard initialize(0, nil) == 1 else {
      throw TLSFailure.libraryUnavailable("\(names.ssl) cannot be initialised")
    }
    verifyErrorString = try symbols.function("X509_verify_cert_error_string")
    errorGet = try symbols.function("ERR_get_error")
    errorReason = try symbols.function("ERR_reason_error_string")
    errorClear = try symbols.function("ERR_clear_error")
    bioNewMemoryBuffer = try symbols.function("BIO_new_mem_buf")
    bioNew = try symbols.function("BIO_new")
    bioFree = try symbols.function("BIO_free")
    bioSetInit = try symbols.function("BIO_set_init")
    bioSetFlags = try symbols.function("BIO_set_flags")
    bioClearFlags = try symbols.function("BIO_clear_flags")
    pemReadCertificate = try symbols.function("PEM_read_bio_X509")
    pemReadPrivateKey = try symbols.function("PEM_read_bio_PrivateKey")
    certificateFree = try symbols.function("X509_free")
    privateKeyFree = try symbols.function("EVP_PKEY_free")
    storeAddCertificate = try symbols.function("X509_STORE_add_cert")
    parametersSetIP = try symbols.function("X509_VERIFY_PARAM_set1_ip_asc")
    clientMethod = try symbols.function("TLS_client_method")
    ctxNew = try symbols.function("SSL_CTX_new")
    ctxFree = try symbols.function("SSL_CTX_free")
    ctxSetDefaultVerifyPaths = try symbols.function("SSL_CTX_set_default_verify_paths")
    ctxGetCertificateStore = try symbols.function("SSL_CTX_get_cert_store")
    ctxControl = try symbols.function("SSL_CTX_ctrl")
    ctxSetOptions = try symbols.function("SSL_CTX_set_options")
    ctxUseCertificate = try symbols.function("SSL_CTX_use_certificate")
    ctxUsePrivateKey = try symbols.function("SSL_CTX_use_PrivateKey")
    ctxCheckPrivateKey = try symbols.function("SSL_CTX_check_private_key")
    ctxSetVerify = try symbols.function("SSL_CTX_set_verify")
    sslNew = try symbols.function("SSL_new")
    sslFree = try symbols.function("SSL_free")
    setBIO = try symbols.function("SSL_set_bio")
    control = try symbols.function("SSL_ctrl")
    setHost = try symbols.function("SSL_set1_host")
    setHostFlags = try symbols.function("SSL_set_hostflags")
    getParameters = try symbols.function("SSL_get0_param")
    setALPNProtocols = try symbols.function("SSL_set_alpn_protos")
    getSelectedALPN = try symbols.function("SSL_get0_alpn_selected")
    connect = try symbols.function("SSL_connect")
    read = try symbols.function("SSL_read")
    write = try symbols.function("SSL_write")
    getError = try symbols.function("SSL_get_error")
    shutdown = try symbols.function("SSL_shutdown")
    getVerifyResult = try symbols.function("SSL_get_verify_result")
    pending = try symbols.function("SSL_pending")
    // Renamed in 3.0; the old name is only a macro there.
    peerCertificate = try symbols.function(
      anyOf: ["SSL_get1_peer_certificate", "SSL_get_peer_certificate"])
    socketMethod = try SocketBIO.makeMethod(symbols)
    #else
    // On Apple platforms URLSession is the transport (Security.framework, not OpenSSL).
    throw TLSFailure.libraryUnavailable("OpenSSL is only used on Linux")
    #endif
  }

  /// Whether `SSL_OP_IGNORE_UNEXPECTED_EOF` exists (OpenSSL 3); 1.1 reports a TCP close
  /// without close_notify as a failed system call with no error, which ``SocketBIO`` tells.
  var hasIgnoreUnexpectedEOF: Bool { version >= 0x3000_0000 }

  // MARK: - Errors

  /// Takes every error queued on this thread by OpenSSL and returns the oldest one's reason
  /// (`"certificate verify failed"`, `"tlsv13 alert certificate required"`), or `nil`.
  func takeErrorReason() -> String? {
    takeError()?.words
  }

  /// OpenSSL's sentence for a certificate verification result (`SSL_get_verify_result`).
  func verifyErrorDescription(_ code: Int) -> String {
    verifyErrorString(code).map { String(cString: $0) } ?? "verification error \(code)"
  }
}
