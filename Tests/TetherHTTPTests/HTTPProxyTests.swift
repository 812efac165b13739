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
  }

  // Guards: a proxy of a kind the engine does not speak, read from the environment, was left
  // out silently, so requests the environment sends through a proxy went directly.
  @Test func anEnvironmentProxyOfAnotherKindFailsRequestsInsteadOfBeingIgnored() throws {
    let proxy = HTTPProxy(environment: [
      "all_proxy": "socks5://user:secret@127.0.0.1:1080", "no_proxy": "internal.test",
    ])
    for url in ["http://example.test/", "https://example.test/"] {
      let error = #expect(throws: HTTPError.self) { try proxy.proxy(for: URL(string: url)!) }
      guard case .invalidRequest(let reason) = error else {
        Issue.record("expected invalidRequest, got \(String(describing: error))")
        continue
      }
      #expect(reason.contains("socks5://127.0.0.1:1080"), "\(reason)")
      #expect(!reason.contains("secret"))
    }
    // Hosts no_proxy names still go directly.
    #expect(try proxy.proxy(for: URL(string: "http://api.internal.test/")!) == nil)
  }

  @Test func noProxyHostsAreReachedDirectly() throws {
    let proxy = HTTPProxy(
      http: URL(string: "http://proxy:3128"), https: URL(string: "http://proxy:3128"),
      bypass: ["example.com", ".corp", "127.0.0.1", "10.0.0.0/8", "[::1]", "db:5432"])
    for direct in [
      "http://example.com/", "https://api.example.com/", "http://build.corp/", "http://corp/",
      "http://127.0.0.1:8080/", "http://10.1.2.3/", "http://[::1]:80/", "http://db/",
    ] {
      #expect(try proxy.proxy(for: URL(string: direct)!) == nil, "\(direct)")
    }
    for proxied in [
      "http://notexample.com/", "https://example.org/", "http://11.0.0.1/", "http://corp.io/",
      "http://example.com.evil/",
    ] {
      #expect(try proxy.proxy(for: URL(string: proxied)!) != nil, "\(proxied)")
    }
    #expect(
      try HTTPProxy(http: proxy.http, bypass: ["*"]).proxy(for: URL(string: "http://a/")!) == nil)
  }

  /// curl's documented `NO_PROXY` rules (CURLOPT_NOPROXY), case by case: what a `no_proxy`
  /// written for curl means to Tether. Guards each edge the hostile review found.
  @Test(arguments: [
    // Explicit entries are trimmed, as the environment's are.
    (" example.test ", "http://example.test/", true),
    ("\texample.test", "http://api.example.test/", true),
    // `*` alone is the only wildcard: `*.example.test` is a name no host has.
    ("*.example.test", "http://example.test/", false),
    ("*.example.test", "http://api.example.test/", false),
    ("*", "http://anything.test/", true),
    // A leading dot is ignored: the domain and its hosts.
    (".example.test", "http://example.test/", true),
    (".example.test", "http://api.example.test/", true),
    // A name covers its domain, never a longer name that ends the same.
    ("test", "http://example.test/", true),
    ("ample.test", "http://example.test/", false),
    // A trailing dot, in the host or the entry, is ignored.
    ("example.test", "http://example.test./", true),
    ("example.test.", "http://api.example.test/", true),
    // IP addresses match as addresses (IPv6 with or without brackets, CIDR for both
    // families), never by a name's suffix.
    ("::1", "http://[::1]/", true),
    ("fd00::/8", "http://[fd12:3456::1]/", true),
    ("fd00::/8", "http://[fe80::1]/", false),
    ("[2001:db8::]/32", "http://[2001:db8:1::5]/", true),
    ("2001:db8::/48", "http://[2001:db8:1::5]/", false),
    ("10.0.0.0/8", "http://[::ffff:1.2.3.4]/", false),
    ("192.168.0.0/16", "http://192.168.7.9/", true),
    ("0.1", "http://10.0.0.1/", false),
  ])
  func noProxyFollowsCurlsRules(entry: String, url: String, direct: Bool) throws {
    let proxy = HTTPProxy.all(URL(string: "http://proxy.test:3128")!, bypass: [entry])
    let goesDirectly = try proxy.proxy(for: URL(string: url)!) == nil
    #expect(goesDirectly == direct, "no_proxy=\(entry) for \(url)")
  }

  // Guards: printing a proxy (or dumping a value holding one) showed the proxy's password.
  @Test func printingAProxyNeverShowsItsPassword() async throws {
    let password = "s3cret-pw"
    let basic = Data("tether:\(password)".utf8).base64EncodedString()
    let proxy = HTTPProxy.all(
      try #require(URL(string: "http://tether:\(password)@127.0.0.1:1")), bypass: [".internal"])
    struct Settings {
      var name = "settings"
      var proxy: HTTPProxy
    }
    let settings = Settings(proxy: proxy)
    // A client that has used the proxy once: its engine holds a route to it.
    let client = HTTPClient(
      baseURL: URL(string: "http://origin.test")!, timeout: .seconds(5), retryPolicy: .none,
      proxy: proxy)
    _ = try? await client.response(for: HTTPRequest(url: client.baseURL))
    var dumped = ""
    dump(settings, to: &dumped)
    var dumpedClient = ""
    dump(client, to: &dumpedClient)
    let texts = [
      String(describing: proxy), String(reflecting: proxy), "\(proxy)", "\([proxy])",
      String(describing: settings), String(reflecting: settings), dumped, dumpedClient,
    ]
    for text in texts {
      #expect(!text.contains(password), "\(text)")
      #expect(!text.contains(basic), "\(text)")
    }
    #expect(String(describing: proxy).contains("http://tether:***@127.0.0.1:1"))
    #expect(dumped.contains("tether:***@127.0.0.1:1"), "\(dumped)")
    #expect(dumped.contains(".internal"), "\(dumped)")
    // The value itself keeps the password: it is what the proxy needs.
    #expect(proxy.http?.password == password)
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

  // Guards: a CONNECT answered 200 with a body read "the proxy refused the tunnel (status
  // 200)"; the proxy accepted it, then sent bytes a tunnel must not carry.
  @Test func aTunnelAnsweredWithABodySaysWhatHappened() async throws {
    let proxy = try HostileServer { connection in
      guard try connection.readRequestHead() != nil else { return }
      try connection.send("HTTP/1.1 200 Connection established\r\nContent-Length: 5\r\n\r\nhello")
      connection.holdUntilClosed()
    }
    defer { proxy.stop() }
    let url = URL(string: "https://origin.test/a")!
    let client = HTTPClient(
      baseURL: url, timeout: .seconds(10), retryPolicy: .none, proxy: .all(proxy.baseURL))
    let error = await #expect(throws: HTTPError.self) {
      try await client.response(for: HTTPRequest(url: url))
    }
    guard case .unreachable(_, let reason) = error else {
      Issue.record("expected unreachable, got \(String(describing: error))")
      return
    }
    #expect(reason.description.contains("accepted the tunnel (status 200)"), "\(reason)")
    #expect(!reason.description.contains("refused"), "\(reason)")
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
