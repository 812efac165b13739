#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system OpenSSL 3 (`libssl.so.3` and `libcrypto.so.3`), opened at run time with
/// ``DynamicLibrary`` and called through C function pointers, so that building Tether needs no
/// OpenSSL header, package or link flag. Every process that links FoundationNetworking has these libraries
/// already (libcurl loads them), so loading them costs nothing there.
///
/// Handles are opaque pointers (`SSL_CTX*`, `SSL*`, `X509*`, `BIO*`, ...). Macros of the C API
/// (`SSL_CTX_set_min_proto_version`, `SSL_set_tlsext_host_name`, ...) are spelled through
/// ``ctxControl`` and ``control`` with the constants below. The libraries are never closed:
/// the function pointers live as long as the process.
///
/// Load it with ``shared`` (the system libraries, loaded once) or ``load(_:)``, which a test
/// gives names that do not exist to take the path where TLS cannot be loaded.
final class OpenSSLLibrary: @unchecked Sendable {
  // @unchecked Sendable: every stored property is an immutable C function pointer (or the
  // names it came from); OpenSSL 3 itself is safe to call from several threads at once as
  // long as one `SSL` object is used by one thread at a time.

  /// The file names to `dlopen`.
  struct Names: Hashable, Sendable {
    /// libssl's file name, such as `libssl.so.3`.
    var ssl: String
    /// libcrypto's file name, such as `libcrypto.so.3`.
    var crypto: String

    /// The system OpenSSL 3.
    static let system = Names(ssl: "libssl.so.3", crypto: "libcrypto.so.3")
  }

  // MARK: - Constants of the C API (from OpenSSL 3.0's headers)

  /// `SSL_ERROR_NONE`: the call succeeded.
  static let sslErrorNone: Int32 = 0
  /// `SSL_ERROR_SSL`: a protocol or verification failure; the error queue says which.
  static let sslErrorSSL: Int32 = 1
  /// `SSL_ERROR_WANT_READ`: call again when the socket is readable.
  static let sslErrorWantRead: Int32 = 2
  /// `SSL_ERROR_WANT_WRITE`: call again when the socket is writable.
  static let sslErrorWantWrite: Int32 = 3
  /// `SSL_ERROR_SYSCALL`: a system call failed (`errno` says why).
  static let sslErrorSyscall: Int32 = 5
  /// `SSL_ERROR_ZERO_RETURN`: the peer closed the TLS connection.
  static let sslErrorZeroReturn: Int32 = 6
  /// `SSL_VERIFY_PEER`: verify the server's certificate and fail the handshake if it fails.
  static let verifyPeer: Int32 = 0x01
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
  /// `SSL_OP_IGNORE_UNEXPECTED_EOF`: a TCP close without close_notify reads as a close.
  static let optionIgnoreUnexpectedEOF: UInt64 = 1 << 7
  /// `X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS`: `*` matches a whole label only.
  static let checkFlagNoPartialWildcards: UInt32 = 0x4
  /// `X509_CHECK_FLAG_NEVER_CHECK_SUBJECT`: the subject's CN is never taken for a host name,
  /// even in a certificate without a subjectAltName (RFC 6125 §6.4.4, as browsers do).
  static let checkFlagNeverCheckSubject: UInt32 = 0x20

  // MARK: - libssl

  /// `const SSL_METHOD *f(void)`.
  typealias MethodFunction = @convention(c) () -> OpaquePointer?
  /// `T *f(U *)`: a constructor from, or a getter of, another handle.
  typealias NewFunction = @convention(c) (OpaquePointer?) -> OpaquePointer?
  /// `void f(T *)`: a destructor.
  typealias FreeFunction = @convention(c) (OpaquePointer?) -> Void
  /// `int f(T *)`.
  typealias StatusFunction = @convention(c) (OpaquePointer?) -> Int32
  /// `int f(T *, U *)`.
  typealias PairStatusFunction = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
  /// `long f(T *, int cmd, long larg, void *parg)`: `SSL_ctrl` and `SSL_CTX_ctrl`.
  typealias ControlFunction =
    @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?)
    -> Int
  /// `uint64_t SSL_CTX_set_options(SSL_CTX *, uint64_t)`.
  typealias SetOptionsFunction = @convention(c) (OpaquePointer?, UInt64) -> UInt64
  /// `void SSL_CTX_set_verify(SSL_CTX *, int, SSL_verify_cb)`.
  typealias SetVerifyFunction = @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?) -> Void
  /// `int SSL_set_fd(SSL *, int)`.
  typealias SetDescriptorFunction = @convention(c) (OpaquePointer?, Int32) -> Int32
  /// `int f(T *, const char *)`.
  typealias SetStringFunction = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
  /// `void SSL_set_hostflags(SSL *, unsigned int)`.
  typealias SetFlagsFunction = @convention(c) (OpaquePointer?, UInt32) -> Void
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

  /// `TLS_client_method`.
  let clientMethod: MethodFunction
  /// `SSL_CTX_new`.
  let ctxNew: NewFunction
  /// `SSL_CTX_free`.
  let ctxFree: FreeFunction
  /// `SSL_CTX_set_default_verify_paths`: the system trust store.
  let ctxSetDefaultVerifyPaths: StatusFunction
  /// `SSL_CTX_get_cert_store`.
  let ctxGetCertificateStore: NewFunction
  /// `SSL_CTX_ctrl`: the macros over it (minimum protocol version, mode, chain certificates).
  let ctxControl: ControlFunction
  /// `SSL_CTX_set_options`.
  let ctxSetOptions: SetOptionsFunction
  /// `SSL_CTX_use_certificate`.
  let ctxUseCertificate: PairStatusFunction
  /// `SSL_CTX_use_PrivateKey`.
  let ctxUsePrivateKey: PairStatusFunction
  /// `SSL_CTX_check_private_key`.
  let ctxCheckPrivateKey: StatusFunction
  /// `SSL_CTX_set_verify` (the callback is always `NULL`).
  let ctxSetVerify: SetVerifyFunction
  /// `SSL_new`.
  let sslNew: NewFunction
  /// `SSL_free`.
  let sslFree: FreeFunction
  /// `SSL_set_fd`.
  let setDescriptor: SetDescriptorFunction
  /// `SSL_ctrl`: the macros over it (SNI).
  let control: ControlFunction
  /// `SSL_set1_host`: the name the certificate must be for.
  let setHost: SetStringFunction
  /// `SSL_set_hostflags`.
  let setHostFlags: SetFlagsFunction
  /// `SSL_get0_param`: the connection's `X509_VERIFY_PARAM`.
  let getParameters: NewFunction
  /// `SSL_set_alpn_protos` (returns 0 on success, unlike most of the API).
  let setALPNProtocols: SetALPNFunction
  /// `SSL_get0_alpn_selected`.
  let getSelectedALPN: GetALPNFunction
  /// `SSL_connect`.
  let connect: StatusFunction
  /// `SSL_read`.
  let read: ReadFunction
  /// `SSL_write`.
  let write: WriteFunction
  /// `SSL_get_error`.
  let getError: GetErrorFunction
  /// `SSL_shutdown`.
  let shutdown: StatusFunction
  /// `SSL_get_verify_result`.
  let getVerifyResult: VerifyResultFunction
  /// `SSL_pending`: decrypted bytes held for the next `SSL_read`.
  let pending: StatusFunction

  // MARK: - libcrypto

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
  /// `BIO *BIO_new_mem_buf(const void *, int)`.
  typealias MemoryBIOFunction = @convention(c) (UnsafeRawPointer?, Int32) -> OpaquePointer?
  /// `int pem_password_cb(char *buffer, int size, int rwflag, void *u)`: writes the
  /// passphrase into `buffer` and returns its length, or returns -1 to fail.
  typealias PassphraseCallback =
    @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
  /// `T *PEM_read_bio_T(BIO *, T **, pem_password_cb *, void *)`. Never pass a `nil`
  /// callback: OpenSSL's default one prompts on the terminal (or stdin) and blocks.
  typealias PEMReadFunction =
    @convention(c) (
      OpaquePointer?, UnsafeMutableRawPointer?, PassphraseCallback?, UnsafeMutableRawPointer?
    ) -> OpaquePointer?

  /// `OpenSSL_version_num`.
  let versionNumber: VersionFunction
  /// `X509_verify_cert_error_string`.
  let verifyErrorString: ErrorStringFunction
  /// `ERR_get_error`.
  let errorGet: GetErrorCodeFunction
  /// `ERR_reason_error_string`.
  let errorReason: ReasonStringFunction
  /// `ERR_clear_error`.
  let errorClear: ClearErrorsFunction
  /// `BIO_new_mem_buf`.
  let bioNewMemoryBuffer: MemoryBIOFunction
  /// `BIO_free`.
  let bioFree: StatusFunction
  /// `PEM_read_bio_X509`.
  let pemReadCertificate: PEMReadFunction
  /// `PEM_read_bio_PrivateKey`.
  let pemReadPrivateKey: PEMReadFunction
  /// `X509_free`.
  let certificateFree: FreeFunction
  /// `EVP_PKEY_free`.
  let privateKeyFree: FreeFunction
  /// `X509_STORE_add_cert`.
  let storeAddCertificate: PairStatusFunction
  /// `X509_VERIFY_PARAM_set1_ip_asc`: the IP address the certificate must be for.
  let parametersSetIP: SetStringFunction

  /// The system libraries, loaded the first time they are asked for; the failure says why
  /// they cannot be used (not installed, not OpenSSL 3, a function missing).
  static let shared: Result<OpenSSLLibrary, TLSFailure> = load(.system)

  /// Loads the libraries named `names`. Each call opens them again (`dlopen` counts
  /// references and returns the same libraries); prefer ``shared``.
  static func load(_ names: Names) -> Result<OpenSSLLibrary, TLSFailure> {
    do throws(TLSFailure) {
      return .success(try OpenSSLLibrary(names))
    } catch {
      return .failure(error)
    }
  }

  private init(_ names: Names) throws(TLSFailure) {
    #if os(Linux)
    // libcrypto first: libssl needs it, and the error names the one that is missing.
    let crypto = try Self.open(names.crypto)
    let ssl = try Self.open(names.ssl)
    #else
    // On Apple platforms URLSession is the transport (Security.framework, not OpenSSL).
    throw TLSFailure.libraryUnavailable("OpenSSL is only used on Linux")
    #endif
    #if os(Linux)
    func symbol<Function>(
      _ library: DynamicLibrary, _ name: String, as: Function.Type
    ) throws(TLSFailure) -> Function {
      guard let function = library.function(name, as: Function.self) else {
        throw TLSFailure.libraryUnavailable("\(name) is missing from the system OpenSSL")
      }
      return function
    }
    versionNumber = try symbol(crypto, "OpenSSL_version_num", as: VersionFunction.self)
    // 3.0 is the first version with SSL_CTX_set_options as a function and the 3.0 API.
    let version = versionNumber()
    guard version >= 0x3000_0000 else {
      throw TLSFailure.libraryUnavailable(
        "OpenSSL 3 is required, found version 0x\(String(version, radix: 16))")
    }
    verifyErrorString = try symbol(
      crypto, "X509_verify_cert_error_string", as: ErrorStringFunction.self)
    errorGet = try symbol(crypto, "ERR_get_error", as: GetErrorCodeFunction.self)
    errorReason = try symbol(crypto, "ERR_reason_error_string", as: ReasonStringFunction.self)
    errorClear = try symbol(crypto, "ERR_clear_error", as: ClearErrorsFunction.self)
    bioNewMemoryBuffer = try symbol(crypto, "BIO_new_mem_buf", as: MemoryBIOFunction.self)
    bioFree = try symbol(crypto, "BIO_free", as: StatusFunction.self)
    pemReadCertificate = try symbol(crypto, "PEM_read_bio_X509", as: PEMReadFunction.self)
    pemReadPrivateKey = try symbol(crypto, "PEM_read_bio_PrivateKey", as: PEMReadFunction.self)
    certificateFree = try symbol(crypto, "X509_free", as: FreeFunction.self)
    privateKeyFree = try symbol(crypto, "EVP_PKEY_free", as: FreeFunction.self)
    storeAddCertificate = try symbol(crypto, "X509_STORE_add_cert", as: PairStatusFunction.self)
    parametersSetIP = try symbol(
      crypto, "X509_VERIFY_PARAM_set1_ip_asc", as: SetStringFunction.self)

    clientMethod = try symbol(ssl, "TLS_client_method", as: MethodFunction.self)
    ctxNew = try symbol(ssl, "SSL_CTX_new", as: NewFunction.self)
    ctxFree = try symbol(ssl, "SSL_CTX_free", as: FreeFunction.self)
    ctxSetDefaultVerifyPaths = try symbol(
      ssl, "SSL_CTX_set_default_verify_paths", as: StatusFunction.self)
    ctxGetCertificateStore = try symbol(ssl, "SSL_CTX_get_cert_store", as: NewFunction.self)
    ctxControl = try symbol(ssl, "SSL_CTX_ctrl", as: ControlFunction.self)
    ctxSetOptions = try symbol(ssl, "SSL_CTX_set_options", as: SetOptionsFunction.self)
    ctxUseCertificate = try symbol(ssl, "SSL_CTX_use_certificate", as: PairStatusFunction.self)
    ctxUsePrivateKey = try symbol(ssl, "SSL_CTX_use_PrivateKey", as: PairStatusFunction.self)
    ctxCheckPrivateKey = try symbol(ssl, "SSL_CTX_check_private_key", as: StatusFunction.self)
    ctxSetVerify = try symbol(ssl, "SSL_CTX_set_verify", as: SetVerifyFunction.self)
    sslNew = try symbol(ssl, "SSL_new", as: NewFunction.self)
    sslFree = try symbol(ssl, "SSL_free", as: FreeFunction.self)
    setDescriptor = try symbol(ssl, "SSL_set_fd", as: SetDescriptorFunction.self)
    control = try symbol(ssl, "SSL_ctrl", as: ControlFunction.self)
    setHost = try symbol(ssl, "SSL_set1_host", as: SetStringFunction.self)
    setHostFlags = try symbol(ssl, "SSL_set_hostflags", as: SetFlagsFunction.self)
    getParameters = try symbol(ssl, "SSL_get0_param", as: NewFunction.self)
    setALPNProtocols = try symbol(ssl, "SSL_set_alpn_protos", as: SetALPNFunction.self)
    getSelectedALPN = try symbol(ssl, "SSL_get0_alpn_selected", as: GetALPNFunction.self)
    connect = try symbol(ssl, "SSL_connect", as: StatusFunction.self)
    read = try symbol(ssl, "SSL_read", as: ReadFunction.self)
    write = try symbol(ssl, "SSL_write", as: WriteFunction.self)
    getError = try symbol(ssl, "SSL_get_error", as: GetErrorFunction.self)
    shutdown = try symbol(ssl, "SSL_shutdown", as: StatusFunction.self)
    getVerifyResult = try symbol(ssl, "SSL_get_verify_result", as: VerifyResultFunction.self)
    pending = try symbol(ssl, "SSL_pending", as: StatusFunction.self)
    #endif
  }

  #if os(Linux)
  private static func open(_ name: String) throws(TLSFailure) -> DynamicLibrary {
    do throws(DynamicLibraryFailure) {
      return try DynamicLibrary(opening: name)
    } catch {
      throw TLSFailure.libraryUnavailable(error.description)
    }
  }
  #endif

  // MARK: - Errors

  /// Takes every error queued on this thread by OpenSSL and returns the oldest one's reason
  /// (`"certificate verify failed"`, `"tlsv13 alert certificate required"`), or `nil`.
  func takeErrorReason() -> String? {
    var first: String?
    while case let code = errorGet(), code != 0 {
      if first == nil {
        first = errorReason(code).map { String(cString: $0) } ?? "OpenSSL error \(code)"
      }
    }
    return first
  }

  /// OpenSSL's sentence for a certificate verification result (`SSL_get_verify_result`).
  func verifyErrorDescription(_ code: Int) -> String {
    verifyErrorString(code).map { String(cString: $0) } ?? "verification error \(code)"
  }
}
