import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TetherHTTP

#if canImport(Glibc)
import Glibc
#endif

/// TLS's own socket BIO (`send` with `MSG_NOSIGNAL`, `recv`) and contexts made off the
/// cooperative pool, against nginx and the real system OpenSSL.
@Suite(
  "TLS socket BIO and context building",
  .enabled(
    if: NginxServer.executable != nil && TestCertificateAuthority.executable != nil,
    "nginx or openssl is not installed; run Scripts/install-test-deps"),
  .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "OpenSSL cannot be loaded"),
  .serialized, .heavy)
struct TLSSocketBIOTests {
  /// A TLS write to a socket the peer can no longer take fails with EPIPE and raises no
  /// `SIGPIPE` at all: the send says `MSG_NOSIGNAL`. (The test process ignores `SIGPIPE` once
  /// a test server has started, so the test blocks it on its thread instead: a blocked signal
  /// is never discarded, and one raised by the write would be left pending there.)
  @Test func aWriteThePeerCannotTakeFailsWithEPIPEAndRaisesNoSIGPIPE() async throws {
    let authority = try await TestCertificateAuthority.shared()
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    let context = try TLSContext(trustedCertificates: [authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: "localhost", context: context)
    try await client.handshake()
    // write(2) on a socket shut for writing raises SIGPIPE, which would end this process.
    _ = Glibc.shutdown(client.descriptor, Int32(SHUT_WR))
    let (result, raised) = Self.withSIGPIPEBlocked {
      Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8).withUnsafeBytes {
        client.session.write($0)
      }
    }
    #expect(result == .failed(.connectionFailed(String(cString: strerror(EPIPE)))))
    #expect(!raised, "the write raised SIGPIPE")
    client.close()
    await nginx.stop()
  }

  /// Runs `body` on this thread with `SIGPIPE` blocked; returns its result and whether a
  /// `SIGPIPE` became pending meanwhile (taken before the mask is restored).
  private static func withSIGPIPEBlocked<Result>(_ body: () -> Result) -> (Result, Bool) {
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    let result = body()
    var pending = sigset_t()
    sigpending(&pending)
    let raised = sigismember(&pending, SIGPIPE) == 1
    if raised {
      var zero = timespec(tv_sec: 0, tv_nsec: 0)
      _ = sigtimedwait(&pipeOnly, nil, &zero)
    }
    return (result, raised)
  }

  /// A request's context is made on the cache's own serial queue, never on the cooperative
  /// pool, and once: two requests for one new configuration share what the first made.
  @Test func aContextIsMadeOnceOnTheBuilderQueueForConcurrentAskers() async throws {
    let authority = try await TestCertificateAuthority.shared()
    let made = LockedState<[Bool]>([])
    let cache = TLSContextCache { configuration throws(TLSFailure) in
      made.withLock { $0.append(DispatchQueue.getSpecific(key: TLSContextCache.onBuilder) == true) }
      return try TLSContext(trustedCertificates: configuration.trustedCertificates)
    }
    let configuration = TLSContextCache.Configuration(
      trustedCertificates: [authority.certificatePEM])
    async let first = cache.contextOffThePool(for: configuration)
    async let second = cache.contextOffThePool(for: configuration)
    let (a, b) = try await (first, second)
    #expect(a === b)
    #expect(made.withLock { $0 } == [true])
    #expect(cache.count == 1)
  }

  /// The same authority given twice (or already in the system store) is trusted, not an
  /// error: only a certificate OpenSSL refuses for another reason fails the context.
  @Test func anAuthorityGivenTwiceIsTrustedOnce() async throws {
    let authority = try await TestCertificateAuthority.shared()
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    let context = try TLSContext(
      trustedCertificates: [authority.certificatePEM, authority.certificatePEM])
    let client = try PollingTLSClient(port: nginx.port, host: "127.0.0.1", context: context)
    try await client.handshake()
    #expect(client.session.isHandshakeDone)
    client.close()
    await nginx.stop()
  }
}
