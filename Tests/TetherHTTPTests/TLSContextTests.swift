import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

/// Making a ``TLSContext``: where OpenSSL cannot be loaded the answer is typed (the request
/// fails with a reason saying so), and a PEM that holds nothing usable is refused by name.
// Serialized: each context reads the system trust store (about 100 ms) on the test's thread.
@Suite("TLS context", .serialized)
struct TLSContextTests {
  @Test func anOpenSSLThatCannotBeLoadedIsATypedAnswer() {
    let missing = OpenSSLLibrary.Names(
      ssl: "libtether-no-such-ssl.so.3", crypto: "libtether-no-such-crypto.so.3")
    #expect {
      _ = try TLSContext(library: missing)
    } throws: { error in
      guard let failure = error as? TLSFailure, case .libraryUnavailable(let detail) = failure
      else { return false }
      let http = failure.httpError(url: "https://example.com")
      guard case .unreachable(_, let reason) = http else { return false }
      return reason.description.hasPrefix("TLS could not be loaded")
        && detail.contains("libtether-no-such")
    }
  }

  @Test(.enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"))
  func theSystemOpenSSLLoads() throws {
    _ = try TLSContext()
  }

  @Test(.enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"))
  func aPEMWithoutACertificateIsRefused() {
    #expect(throws: TLSFailure.invalidConfiguration("no PEM certificate found")) {
      _ = try TLSContext(trustedCertificates: ["not a certificate"])
    }
  }

  @Test(
    .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"),
    .enabled(if: TestCertificateAuthority.executable != nil, "openssl is not installed"))
  func aClientKeyThatDoesNotMatchItsCertificateIsRefused() async throws {
    let authority = try await TestCertificateAuthority.shared()
    _ = try TLSContext(
      trustedCertificates: [authority.certificatePEM],
      clientIdentity: .init(
        certificatePEM: authority.client.certificatePEM, privateKeyPEM: authority.client.keyPEM))
    #expect {
      _ = try TLSContext(
        clientIdentity: .init(
          certificatePEM: authority.client.certificatePEM,
          privateKeyPEM: authority.server.keyPEM))
    } throws: { error in
      guard case .invalidConfiguration(let detail) = error as? TLSFailure else { return false }
      return detail.contains("does not match")
    }
  }
}

/// The process-wide cache of contexts: one per configuration, bounded.
@Suite("TLS context cache")
struct TLSContextCacheTests {
  @Test(.enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"))
  func aConfigurationIsMadeOnceAndTheLeastRecentlyUsedGoesFirst() async throws {
    let cache = TLSContextCache(capacity: 2)
    let system = try cache.context(for: .init())
    #expect(try cache.context(for: .init()) === system)
    let authority = try await TestCertificateAuthority.shared()
    let withCA = try cache.context(for: .init(trustedCertificates: [authority.certificatePEM]))
    #expect(withCA !== system)
    #expect(try cache.context(for: .init()) === system)  // now the most recently used
    _ = try cache.context(
      for: .init(
        clientIdentity: .init(
          certificatePEM: authority.client.certificatePEM,
          privateKeyPEM: authority.client.keyPEM)))
    #expect(cache.count == 2)
    #expect(try cache.context(for: .init()) === system)
    #expect(
      try cache.context(for: .init(trustedCertificates: [authority.certificatePEM])) !== withCA)
  }

  @Test func aFailureIsNotKept() {
    let cache = TLSContextCache()
    #expect(throws: TLSFailure.self) {
      _ = try cache.context(for: .init(trustedCertificates: ["not a certificate"]))
    }
    #expect(cache.count == 0)
  }
}
