import Foundation
import TestSupport
import Testing
import Tether
import TetherHTTP

@testable import TetherEtcd

#if canImport(Glibc)
import Glibc
#endif

/// Whether the system OpenSSL 3 loads (what `https` on the engine needs).
private let openSSLLoads: Bool = {
  #if os(Linux)
  return dlopen("libssl.so.3", RTLD_NOW) != nil
  #else
  return false
  #endif
}()

/// `.etcd` keys against a real etcd member serving its clients over TLS
/// (`--cert-file`/`--key-file`), and one that also requires client certificates
/// (`--client-cert-auth --trusted-ca-file`): saves, loads and the shared watch stream all
/// run over TLS on Tether's engine.
@Suite(
  "etcd over TLS",
  .enabled(
    if: etcdInstalled && TestCertificateAuthority.executable != nil && openSSLLoads,
    "etcd, openssl or libssl.so.3 is missing; run Scripts/install-test-deps"),
  .serialized, .heavy)
struct EtcdTLSTests {
  let authority: TestCertificateAuthority

  init() async throws {
    authority = try await TestCertificateAuthority.shared()
  }

  @Test func keysSaveAndWatchOverTLS() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(certificate: authority.serverAndClient))
    defer { etcd.stop() }
    let key = uniqueKey()
    func cluster() -> EtcdCluster {
      EtcdCluster(
        endpoints: etcd.secureClientURLs, timeout: .seconds(5), watchCheckInterval: .seconds(1),
        trustedCertificates: [authority.certificatePEM])
    }
    @Shared(.etcd(key, in: cluster())) var mine = Flags()
    @Shared(.etcd(key, in: cluster())) var theirs = Flags()
    try await waitUntil("both loaded") { !$mine.isLoading && !$theirs.isLoading }
    #expect($mine.loadError == nil)
    $mine.withLock { $0 = Flags(maintenance: true, note: "over TLS") }
    // The other holder hears it through its watch stream, itself over TLS.
    try await waitUntil("the other holder sees it", timeout: .seconds(10)) {
      theirs == Flags(maintenance: true, note: "over TLS")
    }
    #expect(await etcd.stored(key) == #"{"maintenance":true,"note":"over TLS"}"#)
    #expect($mine.saveError == nil)
  }

  @Test func aMemberThatIsNotTrustedIsRefusedWithItsReason() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(certificate: authority.serverAndClient))
    defer { etcd.stop() }
    let cluster = EtcdCluster(endpoints: etcd.secureClientURLs, timeout: .seconds(3))
    @Shared(.etcd(uniqueKey(), in: cluster)) var value = 0
    do {
      try await $value.load()
      Issue.record("a member whose authority is not trusted answered")
    } catch {
      #expect("\(error)".contains("certificate not trusted"), "\(error)")
    }
  }

  @Test func mutualTLSNeedsTheClientCertificate() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    let key = uniqueKey()
    let withIdentity = EtcdCluster(
      endpoints: etcd.secureClientURLs, timeout: .seconds(5),
      trustedCertificates: [authority.certificatePEM],
      clientCertificate: authority.client.certificatePEM, clientKey: authority.client.keyPEM)
    @Shared(.etcd(key, in: withIdentity)) var counter = 0
    try await waitUntil("loaded") { !$counter.isLoading }
    let next = try await $counter.update {
      $0 += 41; return $0
    }
    #expect(next == 41)
    #expect(await etcd.stored(key) == "41")

    // Without a client certificate, the member refuses the connection: a typed error, and
    // the holder keeps its value.
    let without = EtcdCluster(
      endpoints: etcd.secureClientURLs, timeout: .seconds(3),
      trustedCertificates: [authority.certificatePEM])
    @Shared(.etcd(key, in: without)) var refused = -1
    do {
      try await $refused.load()
      Issue.record("a member requiring client certificates answered a client without one")
    } catch {
      #expect("\(error)".contains("TLS"), "\(error)")
    }
    #expect(refused == -1)
  }

  /// How long `load()` of a fresh key on `cluster` takes to fail, its error, and the TLS
  /// refusal the error carries.
  private func failedLoad(
    _ cluster: EtcdCluster
  ) async -> (error: String, elapsed: Duration, refusal: TLSRefusal?) {
    @Shared(.etcd(uniqueKey(), in: cluster)) var value = 0
    let clock = ContinuousClock()
    let start = clock.now
    do {
      try await $value.load()
      return ("no error", clock.now - start, nil)
    } catch {
      return ("\(error)", clock.now - start, (error as? EtcdError)?.tlsRefusal)
    }
  }

  /// A certificate authority other than the member's, whose client certificate the member
  /// does not trust.
  private static func otherAuthority() async throws -> TestCertificateAuthority {
    try await onDedicatedThread { Result { try TestCertificateAuthority() } }.get()
  }

  // Guards: a refused certificate was retried for the whole 5 s operation timeout (21–33
  // connections, each rebuilding the TLS context): a refusal is not a reachability problem.
  @Test func aRefusedCertificateFailsAtOnceInsteadOfFailingOver() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    let other = try await Self.otherAuthority()
    // The member's certificate is not trusted; then, trusted, the client has no certificate;
    // then the client's certificate is from an authority the member does not trust. The
    // error carries the refusal the TLS layer typed (never found in its words). A 20 s
    // timeout, so that a retried refusal (which lasts the whole timeout) stays far from the
    // bound even when the loaded machine resumes this task seconds late.
    for (cluster, refused) in [
      (EtcdCluster(endpoints: etcd.secureClientURLs, timeout: .seconds(20)), "untrusted member"),
      (
        EtcdCluster(
          endpoints: etcd.secureClientURLs, timeout: .seconds(20),
          trustedCertificates: [authority.certificatePEM]), "no client certificate"
      ),
      (
        EtcdCluster(
          endpoints: etcd.secureClientURLs, timeout: .seconds(20),
          trustedCertificates: [authority.certificatePEM],
          clientCertificate: other.client.certificatePEM, clientKey: other.client.keyPEM),
        "client certificate of another authority"
      ),
    ] {
      let (error, elapsed, refusal) = await failedLoad(cluster)
      #expect(error.contains("certificate"), "\(refused): \(error)")
      #expect(elapsed < .seconds(10), "the refusal took \(elapsed), retried until the timeout")
      switch refused {
      case "untrusted member": #expect(refusal == .certificateUntrusted, "\(error)")
      case "no client certificate":
        // TLS 1.3's certificate_required (116); TLS 1.2 servers send bad_certificate (42).
        #expect(
          refusal == .clientCertificateRefused(alert: 116)
            || refusal == .clientCertificateRefused(alert: 42), "\(error)")
      default:
        guard case .clientCertificateRefused = refusal else {
          Issue.record("expected the client certificate refused, got \(error)")
          continue
        }
      }
    }
  }

  // Guards: a refusal is decided by the failure's type, not its words, and never retried by
  // the connection pool's connect back-off nor by the cluster's fail-over: one connection per
  // refusal (counted by a TCP relay in front of the member).
  @Test func aRefusedCertificateCostsOneConnection() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    let memberPort = try #require(etcd.secureClientURLs.first?.port)
    for trusted in [[], [authority.certificatePEM]] {
      let relay = try HostileServer { connection in
        try connection.relay(toLoopbackPort: UInt16(memberPort), first: Data())
      }
      defer { relay.stop() }
      let cluster = EtcdCluster(
        endpoints: [URL(string: "https://127.0.0.1:\(relay.port)")!], timeout: .seconds(20),
        trustedCertificates: trusted)
      // One read, without a key (whose watch stream would open a connection of its own).
      let clock = ContinuousClock()
      let start = clock.now
      do {
        _ = try await cluster.range(Data(uniqueKey().utf8))
        Issue.record("a refused member answered")
      } catch {
        #expect("\(error)".contains("certificate"), "\(error)")
        #expect(error.tlsRefusal != nil, "\(error)")
      }
      #expect(clock.now - start < .seconds(10), "the refusal took \(clock.now - start)")
      #expect(relay.connectionCount <= 2, "\(relay.connectionCount) connections")
    }
  }

  // Guards: the server refusing the client's certificate with an alert was told from a reset
  // by the alert's words. Now typed from the alert's number, for `HTTPClient` as for the
  // cluster: a client certificate of another authority costs one connection, with the retry
  // policy's five attempts, and fails at once with the refusal.
  @Test func aClientCertificateTheMemberRefusesIsNotRetriedByHTTPClient() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    let memberPort = try #require(etcd.secureClientURLs.first?.port)
    let other = try await Self.otherAuthority()
    let relay = try HostileServer { connection in
      try connection.relay(toLoopbackPort: UInt16(memberPort), first: Data())
    }
    defer { relay.stop() }
    let client = HTTPClient(
      baseURL: URL(string: "https://127.0.0.1:\(relay.port)")!, timeout: .seconds(20),
      retryPolicy: HTTPRetryPolicy(maximumAttempts: 5),
      trustedCertificates: [authority.certificatePEM],
      clientCertificatePEM: other.client.certificatePEM, clientKeyPEM: other.client.keyPEM,
      proxy: .none, plainHTTPOverSockets: true)
    let clock = ContinuousClock()
    let start = clock.now
    let error = await #expect(throws: HTTPError.self) {
      // A GET, idempotent, so that the retry policy would repeat it if it were transient.
      _ = try await client.response(
        for: HTTPRequest(url: client.baseURL.appendingPathComponent("version")))
    }
    guard case .clientCertificateRefused(let alert) = error?.tlsRefusal else {
      Issue.record("expected the client certificate refused, got \(String(describing: error))")
      return
    }
    #expect([42, 43, 44, 45, 46, 48, 49, 116].contains(alert), "alert \(alert)")
    #expect("\(String(describing: error))".contains("client certificate"))
    #expect(clock.now - start < .seconds(10), "the refusal took \(clock.now - start)")
    #expect(relay.connectionCount == 1, "\(relay.connectionCount) connections")
  }

  // Guards: an encrypted client key made OpenSSL prompt for its passphrase on the terminal
  // (or stdout, reading stdin), and the call hung past its timeout.
  @Test func anEncryptedClientKeyWithoutItsPassphraseFailsAtOnce() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    // A 20 s timeout: a call that hangs until it lasts the whole of it, far from the bound.
    let cluster = EtcdCluster(
      endpoints: etcd.secureClientURLs, timeout: .seconds(20),
      trustedCertificates: [authority.certificatePEM],
      clientCertificate: authority.encryptedClient.certificatePEM,
      clientKey: authority.encryptedClient.keyPEM)
    let (error, elapsed, refusal) = await failedLoad(cluster)
    #expect(error.contains("the private key is encrypted and no passphrase was given"), "\(error)")
    #expect(refusal == .invalidConfiguration)
    #expect(elapsed < .seconds(10), "it took \(elapsed)")
  }

  @Test func anEncryptedClientKeyWithItsPassphraseAuthenticates() async throws {
    let etcd = try await EtcdServer.start(
      tls: .init(
        certificate: authority.serverAndClient, clientCertificateAuthority: authority.authority))
    defer { etcd.stop() }
    let key = uniqueKey()
    let cluster = EtcdCluster(
      endpoints: etcd.secureClientURLs, timeout: .seconds(5),
      trustedCertificates: [authority.certificatePEM],
      clientCertificate: authority.encryptedClient.certificatePEM,
      clientKey: authority.encryptedClient.keyPEM,
      clientKeyPassphrase: TestCertificateAuthority.clientKeyPassphrase)
    @Shared(.etcd(key, in: cluster)) var counter = 0
    try await waitUntil("loaded") { !$counter.isLoading }
    #expect($counter.loadError == nil)
    #expect(
      try await $counter.update {
        $0 = 7; return $0
      } == 7)
    #expect(await etcd.stored(key) == "7")
    // A wrong passphrase is refused at once too, saying so.
    let wrong = EtcdCluster(
      endpoints: etcd.secureClientURLs, timeout: .seconds(20),
      trustedCertificates: [authority.certificatePEM],
      clientCertificate: authority.encryptedClient.certificatePEM,
      clientKey: authority.encryptedClient.keyPEM, clientKeyPassphrase: "not it")
    let (error, elapsed, _) = await failedLoad(wrong)
    #expect(error.contains("cannot be decrypted with the passphrase given"), "\(error)")
    #expect(elapsed < .seconds(10), "it took \(elapsed)")
  }
}
