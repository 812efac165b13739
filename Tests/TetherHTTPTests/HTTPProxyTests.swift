import Foundation
import TestSupport
import Testing

@testable import TetherHTTP

/// What `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` mean to a client: read as curl
/// reads them (lower case first), and the hosts `no_proxy` sends directly.
@Suite struct HTTPProxySettingsTests {
  @Test func theEnvironmentNamesAProxyPerScheme() {
    let proxy = HTTPProxy(environment: [
      "http_proxy": "http://plain.proxy:3128", "HTTPS_PROXY": "secure.proxy:8080",
      "NO_PROXY": "internal.example, .corp, 10.0.0.0/8",
    ])
    #expect(proxy.http == URL(string: "http://plain.proxy:3128"))
    // Written without a scheme, as many environments do: an http proxy.
    #expect(proxy.https == URL(string: "http://secure.proxy:8080"))
    #expect(proxy.bypass == ["internal.example", ".corp", "10.0.0.0/8"])
  }

  @Test func lowerCaseWinsAndAllProxyFillsTheGaps() {
    let proxy = HTTPProxy(environment: [
      "http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2", "ALL_PROXY": "http://all:3",
    ])
    #expect(proxy.http == URL(string: "http://lower:1"))
    #expect(proxy.https == URL(string: "http://all:3"))
    #expect(HTTPProxy(environment: [:]) == .none)
    // A kind of proxy the engine does not speak is left out, as curl users' socks settings.
    #expect(HTTPProxy(environment: ["all_proxy": "socks5://127.0.0.1:1080"]) == .none)
  }

  @Test func noProxyHostsAreReachedDirectly() throws {
    let proxy = HTTPProxy(
      http: URL(string: "http://proxy:3128"), https: URL(string: "http://proxy:3128"),
      bypass: ["example.com", ".corp", "*.svc", "127.0.0.1", "10.0.0.0/8", "[::1]", "db:5432"])
    for direct in [
      "http://example.com/", "https://api.example.com/", "http://build.corp/",
      "https://etcd.svc/", "http://127.0.0.1:8080/", "http://10.1.2.3/", "http://[::1]:80/",
      "http://db/",
    ] {
      #expect(try proxy.proxy(for: URL(string: direct)!) == nil, "\(direct)")
    }
    for proxied in [
      "http://notexample.com/", "https://example.org/", "http://11.0.0.1/", "http://corp.io/",
    ] {
      #expect(try proxy.proxy(for: URL(string: proxied)!) != nil, "\(proxied)")
    }
    #expect(
      try HTTPProxy(http: proxy.http, bypass: ["*"]).proxy(for: URL(string: "http://a/")!) == nil)
  }

  @Test func aProxyThatIsNotPlainHTTPIsRefusedWithAClearError() {
    let proxy = HTTPProxy.all(URL(string: "socks5://user:secret@proxy:1080")!)
    #expect(throws: HTTPError.self) { try proxy.proxy(for: URL(string: "http://a/")!) }
    do {
      _ = try proxy.proxy(for: URL(string: "http://a/")!)
    } catch {
      #expect(!"\(error)".contains("secret"))
    }
  }
}

/// Requests through a real proxy on loopback: `http` in absolute form, `https` through a
/// `CONNECT` tunnel, credentials for the proxy only, and the answer with a trailer that
/// crashed URLSession behind a proxy (swift-corelibs-foundation #5285).
@Suite("Proxies for HTTP and HTTPS on the engine", .serialized, .heavy)
struct HTTPProxyTests {
  static let credentials = (user: "tether", password: "s3cret")
  static let basic = "Basic " + Data("tether:s3cret".utf8).base64EncodedString()

  @Test func plainHTTPGoesToTheProxyInAbsoluteFormAndItsCredentialsStopThere() async throws {
    let origin = try TestHTTPServer()
    origin.setDocument("through the proxy", at: "/doc")
    let proxy = try LoopbackProxy(credentials: Self.credentials)
    let client = HTTPClient(
      baseURL: origin.baseURL,
      proxy: .all(proxy.url(user: Self.credentials.user, password: Self.credentials.password)))
    let response = try await client.response(
      for: HTTPRequest(url: origin.url(for: "/doc"), headers: ["Authorization": "Bearer t"]))
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == "through the proxy")
    let seen = try #require(proxy.requests.first)
    #expect(seen.target == origin.url(for: "/doc").absoluteString)
    #expect(seen.header("Proxy-Authorization") == Self.basic)
    let arrived = try #require(origin.requests(at: "/doc").first)
    #expect(arrived.header("Proxy-Authorization") == nil)
    #expect(arrived.header("Authorization") == "Bearer t")
    proxy.stop()
  }

  @Test func wrongProxyCredentialsGetTheProxysAnswer() async throws {
    let origin = try TestHTTPServer()
    origin.setDocument("never", at: "/doc")
    let proxy = try LoopbackProxy(credentials: Self.credentials)
    let client = HTTPClient(
      baseURL: origin.baseURL, proxy: .all(proxy.url(user: "tether", password: "wrong")))
    let response = try await client.response(for: HTTPRequest(url: origin.url(for: "/doc")))
    #expect(response.status == 407)
    #expect(origin.requestCount == 0)
    proxy.stop()
  }

  @Test func noProxyHostsBypassTheEnvironmentsProxy() async throws {
    let origin = try TestHTTPServer()
    origin.setDocument("direct", at: "/doc")
    let proxy = try LoopbackProxy()
    let settings = HTTPProxy(environment: [
      "http_proxy": proxy.url().absoluteString, "no_proxy": "localhost,127.0.0.1",
    ])
    let client = HTTPClient(baseURL: origin.baseURL, proxy: settings)
    let response = try await client.response(for: HTTPRequest(url: origin.url(for: "/doc")))
    #expect(String(decoding: response.body, as: UTF8.self) == "direct")
    #expect(proxy.requests.isEmpty)
    proxy.stop()
  }

  /// A chunked answer with a trailer, through `http_proxy`: the case that ended the process
  /// on URLSession. On the engine it is an ordinary answer.
  @Test func aChunkedAnswerWithATrailerThroughTheProxyDoesNotCrash() async throws {
    let origin = try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      try connection.send(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n"
          + "5\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: 1234\r\n\r\n")
    }
    let proxy = try LoopbackProxy()
    let client = HTTPClient(
      baseURL: origin.baseURL,
      proxy: HTTPProxy(environment: ["http_proxy": proxy.url().absoluteString]))
    let response = try await client.response(for: HTTPRequest(url: origin.url(for: "/trailer")))
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == "hello world")
    #expect(proxy.requests.count == 1)
    proxy.stop()
    origin.stop()
  }
}

/// `https` through a real proxy's `CONNECT` tunnel to a real nginx over TLS.
@Suite(
  "HTTPS through a proxy's CONNECT tunnel",
  .enabled(
    if: NginxServer.executable != nil && TestCertificateAuthority.executable != nil,
    "nginx or openssl is not installed; run Scripts/install-test-deps"),
  .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"),
  .serialized, .heavy)
struct HTTPSProxyTunnelTests {
  let authority: TestCertificateAuthority

  init() async throws {
    authority = try await TestCertificateAuthority.shared()
  }

  @Test func httpsGoesThroughOneTunnelAndTheOriginNeverSeesProxyCredentials() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("tunnelled", as: "t.txt")
    let proxy = try LoopbackProxy(credentials: HTTPProxyTests.credentials)
    let client = HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM],
      proxy: .all(proxy.url(user: "tether", password: "s3cret")))
    for _ in 0..<3 {
      let response = try await client.response(
        for: HTTPRequest(url: nginx.baseURL.appendingPathComponent("t.txt")))
      #expect(response.status == 200)
      #expect(String(decoding: response.body, as: UTF8.self) == "tunnelled")
      #expect(response.header("X-Received-Proxy-Authorization") == nil)
    }
    // One tunnel, kept alive for every request; the credentials went on its CONNECT only.
    #expect(proxy.connectionCount == 1)
    #expect(proxy.requests.map(\.method) == ["CONNECT"])
    #expect(proxy.requests.first?.target == "127.0.0.1:\(nginx.port)")
    #expect(proxy.requests.first?.header("Proxy-Authorization") == HTTPProxyTests.basic)
    proxy.stop()
    await nginx.stop()
  }

  @Test func aTunnelTheProxyRefusesIsATypedError() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    let proxy = try LoopbackProxy(credentials: HTTPProxyTests.credentials)
    let client = HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .all(proxy.url()))
    let url = nginx.baseURL.appendingPathComponent("t.txt")
    await #expect(
      throws: HTTPError.unreachable(
        url: url.absoluteString, reason: "the proxy requires authentication (407)")
    ) {
      try await client.response(for: HTTPRequest(url: url))
    }
    proxy.stop()
    await nginx.stop()
  }

  @Test func serverSentEventsThroughTheTunnel() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("data: tunnelled event\n\n", as: "e.sse")
    let proxy = try LoopbackProxy()
    let client = HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .all(proxy.url()))
    var events: [String] = []
    for try await event in client.serverSentEvents(
      for: HTTPRequest(url: nginx.baseURL.appendingPathComponent("e.sse")))
    {
      events.append(event.data)
    }
    #expect(events == ["tunnelled event"])
    #expect(proxy.requests.map(\.method) == ["CONNECT"])
    proxy.stop()
    await nginx.stop()
  }
}
