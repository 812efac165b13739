import Foundation
import TestSupport
import Testing
import Tether
import TetherEtcd

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
}
