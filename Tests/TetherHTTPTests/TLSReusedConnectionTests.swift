import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

/// Many GETs on one kept-alive TLS connection through `HTTPClient`: the path whose system
/// calls the custom socket BIO cut (no signal-mask juggling around `SSL_read`/`SSL_write`).
/// `TETHER_REUSED_HTTPS_GETS` sets how many, so that `strace -c -f` over two counts gives the
/// system calls of one reused GET.
@Suite(
  "Reused TLS connections",
  .enabled(
    if: NginxServer.executable != nil && TestCertificateAuthority.executable != nil,
    "nginx or openssl is not installed; run Scripts/install-test-deps"),
  .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "OpenSSL cannot be loaded"),
  .serialized, .heavy)
struct TLSReusedConnectionTests {
  @Test func manyGETsRideOneKeptAliveConnection() async throws {
    let authority = try await TestCertificateAuthority.shared()
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish(String(repeating: "x", count: 1024), as: "1k.txt")
    let client = HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .none)
    let count =
      ProcessInfo.processInfo.environment["TETHER_REUSED_HTTPS_GETS"].flatMap(Int.init) ?? 20
    let url = nginx.baseURL.appendingPathComponent("1k.txt")
    for _ in 0..<count {
      let response = try await client.response(for: HTTPRequest(url: url))
      #expect(response.status == 200 && response.body.count == 1024)
    }
    await nginx.stop()
  }
}
