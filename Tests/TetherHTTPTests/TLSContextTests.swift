import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

/// Making a ``TLSContext``: where OpenSSL cannot be loaded the answer is typed (the request
/// fails with a reason saying so), and a PEM that holds nothing usable is refused by name.
// Serialized: each context reads the system trust store (about 100 ms of work), on a thread of
// its own (`onDedicatedThread`), never on one of Swift concurrency's (two on CI).
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
      return reason.hasPrefix("TLS could not be loaded")
        && detail.contains("libtether-no-such")
    }
  }

  @Test(.enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"))
  func theSystemOpenSSLLoads() async throws {
    _ = try await onDedicatedThread { Result { try TLSContext() } }.get()
  }

  @Test(.enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"))
  func aPEMWithoutACertificateIsRefused() async {
    let made = await onDedicatedThread {
      Result { try TLSContext(trustedCertificates: ["not a certificate"]) }
    }
    #expect(throws: TLSFailure.invalidConfiguration("no PEM certificate found")) {
      _ = try made.get()
    }
  }

  @Test(
    .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"),
    .enabled(if: TestCertificateAuthority.executable != nil, "openssl is not installed"))
  func aClientKeyThatDoesNotMatchItsCertificateIsRefused() async throws {
    let authority = try await TestCertificateAuthority.shared()
    let (matching, mismatched) = await onDedicatedThread {
      (
        Result {
          try TLSContext(
            trustedCertificates: [authority.certificatePEM],
            clientIdentity: .init(
              certificatePEM: authority.client.certificatePEM,
              privateKeyPEM: authority.client.keyPEM))
        },
        Result {
          try TLSContext(
            clientIdentity: .init(
              certificatePEM: authority.client.certificatePEM,
              privateKeyPEM: authority.server.keyPEM))
        }
      )
    }
    _ = try matching.get()
    #expect {
      _ = try mismatched.get()
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
    let authority = try await TestCertificateAuthority.shared()
    // Each new context reads the system trust store: on a thread of its own, off the pool;
    // the identities the cache answered come back to be checked here.
    let (answers, count) = try await onDedicatedThread {
      Result { () throws -> ([TLSContext], Int) in
        let cache = TLSContextCache(capacity: 2)
        let withCA = TLSContextCache.Configuration(trustedCertificates: [authority.certificatePEM])
        let withClient = TLSContextCache.Configuration(
          clientIdentity: .init(
            certificatePEM: authority.client.certificatePEM,
            privateKeyPEM: authority.client.keyPEM))
        var answers = [try cache.context(for: .init()), try cache.context(for: .init())]
        answers.append(try cache.context(for: withCA))
        answers.append(try cache.context(for: .init()))  // now the most recently used
        _ = try cache.context(for: withClient)
        answers.append(try cache.context(for: .init()))
        answers.append(try cache.context(for: withCA))
        return (answers, cache.count)
      }
    }.get()
    #expect(count == 2)
    let system = answers[0]
    #expect(answers[1] === system)
    #expect(answers[2] !== system)
    #expect(answers[3] === system)
    #expect(answers[4] === system)
    // The context with the authority was the least recently used: evicted, then made anew.
    #expect(answers[5] !== answers[2])
  }

  @Test func aFailureIsNotKept() {
    let cache = TLSContextCache()
    #expect(throws: TLSFailure.self) {
      _ = try cache.context(for: .init(trustedCertificates: ["not a certificate"]))
    }
    #expect(cache.count == 0)
  }
}
