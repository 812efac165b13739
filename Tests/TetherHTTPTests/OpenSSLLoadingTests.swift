import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

/// Which OpenSSL loads: the candidate names (3, 1.1, unversioned), the version floor, and
/// the look-up of functions the versions spell differently.
///
/// No real OpenSSL 1.1 is installable on the Debian 12 machines the tests run on
/// (`apt-cache policy libssl1.1` finds none), so 1.1's own test runs only where
/// `libssl.so.1.1` exists; elsewhere the look-up logic is tested with OpenSSL 3 under both of
/// its file names (`libssl.so.3` and the unversioned `libssl.so`).
@Suite("OpenSSL loading", .serialized)
struct OpenSSLLoadingTests {
  static let hasOpenSSL = (try? OpenSSLLibrary.shared.get()) != nil
  static let hasUnversioned = (try? DynamicLibrary(opening: "libssl.so")) != nil
  static let hasOpenSSL11 = (try? DynamicLibrary(opening: "libssl.so.1.1")) != nil

  @Test func theSystemLibraryIsTheFirstCandidateThatLoadsNewestFirst() {
    #expect(
      OpenSSLLibrary.Names.candidates == [
        .init(ssl: "libssl.so.3", crypto: "libcrypto.so.3"),
        .init(ssl: "libssl.so.1.1", crypto: "libcrypto.so.1.1"),
        .init(ssl: "libssl.so", crypto: "libcrypto.so"),
      ])
    #expect(OpenSSLLibrary.Names.candidates.first == .system)
  }

  @Test func openSSL111AndLaterAreUsedAndOlderOnesRefused() {
    #expect(OpenSSLLibrary.isSupported(version: 0x3000_0020))  // 3.0.2
    #expect(OpenSSLLibrary.isSupported(version: 0x1010_117F))  // 1.1.1w
    #expect(OpenSSLLibrary.isSupported(version: 0x1010_1000))  // 1.1.1
    #expect(!OpenSSLLibrary.isSupported(version: 0x1010_007F))  // 1.1.0h
    #expect(!OpenSSLLibrary.isSupported(version: 0x1000_2000))  // 1.0.2
  }

  @Test func whenNoCandidateLoadsTheErrorNamesEachFile() {
    let missing = OpenSSLLibrary.Names(ssl: "libtether-none.so.9", crypto: "libtether-none.so.9")
    guard case .failure(.libraryUnavailable(let detail)) = OpenSSLLibrary.load(missing) else {
      Issue.record("a library that does not exist loaded")
      return
    }
    #expect(detail.contains("libtether-none.so.9"))
  }

  @Test(.enabled(if: hasOpenSSL, "OpenSSL cannot be loaded"))
  func aFunctionSpelledTwoWaysIsFoundUnderEitherNameAndAMissingOneIsNamed() throws {
    let symbols = OpenSSLSymbols(library: try OpenSSLSymbols.open("libssl.so.3"), name: "ssl")
    // 3 exports the new name only (the old one is a macro there); 1.1 the old name only.
    let _: OpenSSLLibrary.CreateFunction = try symbols.function(
      anyOf: ["SSL_get1_peer_certificate", "SSL_get_peer_certificate"])
    let _: OpenSSLLibrary.CreateFunction = try symbols.function(
      anyOf: ["SSL_get_peer_certificate_in_no_version", "SSL_get1_peer_certificate"])
    // libcrypto's functions come through libssl's handle, from the libcrypto it links.
    let _: OpenSSLLibrary.VersionFunction = try symbols.function("OpenSSL_version_num")
    #expect(
      throws: TLSFailure.libraryUnavailable(
        "SSL_no_such_function or SSL_nor_this is missing from ssl")
    ) {
      let _: OpenSSLLibrary.StatusFunction = try symbols.function(
        anyOf: ["SSL_no_such_function", "SSL_nor_this"])
    }
  }

  @Test(
    .enabled(if: hasOpenSSL, "OpenSSL cannot be loaded"),
    .enabled(if: hasUnversioned, "libssl.so (the development name) is not installed"))
  func theUnversionedNamesLoadAUsableLibrary() throws {
    let names = OpenSSLLibrary.Names(ssl: "libssl.so", crypto: "libcrypto.so")
    let library = try OpenSSLLibrary.load(names).get()
    #expect(OpenSSLLibrary.isSupported(version: library.version))
    _ = try TLSContext(library: names)
  }

  @Test(
    .enabled(if: hasOpenSSL11, "OpenSSL 1.1 (libssl.so.1.1) is not installed"),
    .enabled(if: TestCertificateAuthority.executable != nil, "openssl is not installed"),
    .enabled(if: NginxServer.executable != nil, "nginx is not installed"))
  func openSSL11LoadsAndCarriesAGet() async throws {
    let names = OpenSSLLibrary.Names(ssl: "libssl.so.1.1", crypto: "libcrypto.so.1.1")
    let library = try OpenSSLLibrary.load(names).get()
    #expect(library.version >> 20 == 0x101)
    #expect(!library.hasIgnoreUnexpectedEOF)
    let authority = try await TestCertificateAuthority.shared()
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("hello over 1.1", as: "hello.txt")
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM], library: names)
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    let response = try await client.get("/hello.txt")
    #expect(response.status == 200 && response.body == "hello over 1.1")
    client.close()
    await nginx.stop()
  }
}
