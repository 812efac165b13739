import Foundation
import TestSupport
import Testing
import Tether

@testable import TetherHTTP

/// `https` through `HTTPClient` on the engine, against a real nginx serving certificates made
/// at test time: what a user of an `https` API relies on (trust, refusals that say why,
/// kept-alive connections, streams, `.http` keys), and the error `https` fails with where
/// OpenSSL cannot be loaded (there is no fallback).
@Suite(
  "HTTPS on the engine against nginx",
  .enabled(
    if: NginxServer.executable != nil && TestCertificateAuthority.executable != nil,
    "nginx or openssl is not installed; run Scripts/install-test-deps"),
  .enabled(if: (try? OpenSSLLibrary.shared.get()) != nil, "libssl.so.3 cannot be loaded"),
  .serialized, .heavy)
struct HTTPSEngineTests {
  let authority: TestCertificateAuthority

  init() async throws {
    authority = try await TestCertificateAuthority.shared()
  }

  private func client(_ nginx: NginxTLSServer, trusting: Bool = true) -> HTTPClient {
    HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: trusting ? [authority.certificatePEM] : [], proxy: .none)
  }

  private func get(
    _ client: HTTPClient, _ path: String
  ) async throws(HTTPError)
    -> HTTPResponseMessage
  {
    try await client.response(
      for: HTTPRequest(url: client.baseURL.appendingPathComponent(path)))
  }

  @Test(arguments: ["127.0.0.1", "localhost"])
  func aTrustedServerAnswersAGet(host: String) async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("hello over TLS", as: "hello.txt")
    let client = HTTPClient(
      baseURL: URL(string: "https://\(host):\(nginx.port)")!, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .none)
    let response = try await get(client, "hello.txt")
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == "hello over TLS")
    await nginx.stop()
  }

  /// Untrusted, for another host, expired: each is refused before a byte of the request is
  /// sent, with a typed error whose reason says which in words and in its `tlsRefusal`.
  @Test(arguments: [
    (Certificate.untrusted, "certificate not trusted (self-signed or unknown issuer)"),
    (Certificate.otherHost, "certificate is for another host"),
    (Certificate.expired, "certificate expired"),
  ])
  func aBadCertificateIsRefusedWithItsReason(
    certificate: Certificate, reason: String
  )
    async throws
  {
    let nginx = try await NginxTLSServer.start(certificate: certificate.identity(authority))
    try nginx.publish("secret", as: "secret.txt")
    let client = client(nginx, trusting: certificate != .untrusted)
    let url = nginx.baseURL.appendingPathComponent("secret.txt")
    await #expect(
      throws: HTTPError.unreachable(
        url: url.absoluteString,
        reason: FailureReason(reason, tlsRefusal: certificate.refusal))
    ) {
      try await client.response(for: HTTPRequest(url: url))
    }
    await nginx.stop()
  }

  // Guards: a refused certificate was told from a network failure by its error's words; the
  // retry policy now reads the refusal the TLS layer typed. With the default policy (three
  // attempts) and the pool's connect back-off, each refusal costs one connection, counted by
  // a TCP relay in front of nginx, and fails well within the first back-off.
  @Test(arguments: [Certificate.untrusted, .otherHost, .expired])
  func aRefusedServerCertificateCostsOneConnection(certificate: Certificate) async throws {
    let nginx = try await NginxTLSServer.start(certificate: certificate.identity(authority))
    try nginx.publish("secret", as: "secret.txt")
    let relay = try HostileServer { connection in
      try connection.relay(toLoopbackPort: nginx.port, first: Data())
    }
    defer { relay.stop() }
    let client = HTTPClient(
      baseURL: URL(string: "https://127.0.0.1:\(relay.port)")!, timeout: .seconds(10),
      retryPolicy: HTTPRetryPolicy(maximumAttempts: 5),
      trustedCertificates: certificate == .untrusted ? [] : [authority.certificatePEM],
      proxy: .none)
    let clock = ContinuousClock()
    let start = clock.now
    let error = await #expect(throws: HTTPError.self) {
      _ = try await get(client, "secret.txt")
    }
    #expect(error?.tlsRefusal == certificate.refusal, "\(String(describing: error))")
    // The connection count proves it; the time only that nothing waited for the timeout
    // (loose: on two loaded cores a continuation can resume seconds late).
    #expect(clock.now - start < .seconds(5), "the refusal took \(clock.now - start)")
    #expect(relay.connectionCount == 1, "\(relay.connectionCount) connections")
    await nginx.stop()
  }

  /// RFC 6125: a certificate whose only name is its subject's CN (no subjectAltName) is not
  /// for that name, even when the CN matches and a trusted authority signed it.
  @Test func aCertificateNamedOnlyInItsCommonNameIsRefused() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.commonNameOnlyServer)
    try nginx.publish("secret", as: "secret.txt")
    let client = HTTPClient(
      baseURL: URL(string: "https://localhost:\(nginx.port)")!, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .none)
    let url = client.baseURL.appendingPathComponent("secret.txt")
    await #expect(
      throws: HTTPError.unreachable(
        url: url.absoluteString,
        reason: FailureReason(
          "certificate is for another host", tlsRefusal: .certificateHostMismatch))
    ) {
      try await client.response(for: HTTPRequest(url: url))
    }
    await nginx.stop()
  }

  // Guards: an encrypted client key made OpenSSL's default passphrase callback prompt on the
  // terminal (or on stdout, reading stdin), and the request hung past its timeout.
  @Test func anEncryptedClientKeyIsUsedWithItsPassphraseAndRefusedAtOnceWithoutIt()
    async throws
  {
    let nginx = try await NginxTLSServer.start(
      certificate: authority.server, clientCertificateAuthority: authority.authority)
    try nginx.publish("members only", as: "secret.txt")
    let url = nginx.baseURL.appendingPathComponent("secret.txt")
    func client(passphrase: String?) -> HTTPClient {
      HTTPClient(
        baseURL: nginx.baseURL, timeout: .seconds(10),
        trustedCertificates: [authority.certificatePEM],
        clientCertificatePEM: authority.encryptedClient.certificatePEM,
        clientKeyPEM: authority.encryptedClient.keyPEM, clientKeyPassphrase: passphrase,
        proxy: .none, plainHTTPOverSockets: true)
    }
    let admitted = try await client(passphrase: TestCertificateAuthority.clientKeyPassphrase)
      .response(for: HTTPRequest(url: url))
    #expect(admitted.status == 200)
    #expect(String(decoding: admitted.body, as: UTF8.self) == "members only")

    let clock = ContinuousClock()
    for (passphrase, reason) in [
      (nil, "TLS configuration refused: the private key is encrypted and no passphrase was given"),
      (
        "not it",
        "TLS configuration refused: the private key cannot be decrypted with the passphrase given"
      ),
    ] as [(String?, String)] {
      let start = clock.now
      let error = await #expect(throws: HTTPError.self) {
        try await client(passphrase: passphrase).response(for: HTTPRequest(url: url))
      }
      guard case .unreachable(_, let got) = error else {
        Issue.record("expected unreachable, got \(String(describing: error))")
        continue
      }
      #expect(got.description.hasPrefix(reason), "\(got)")
      #expect(got.tlsRefusal == .invalidConfiguration)
      // Not retried: the retry policy takes this failure for a permanent one…
      #expect(error.map { !HTTPRetryPolicy.isTransient($0) } == true)
      // …and refused at once, not after hanging until the 10 s timeout. (Not a tighter
      // bound: on two loaded cores a continuation can resume seconds late.)
      #expect(clock.now - start < .seconds(5), "it took \(clock.now - start)")
    }
    await nginx.stop()
  }

  enum Certificate: Sendable, CustomStringConvertible {
    case untrusted, otherHost, expired
    var refusal: TLSRefusal {
      switch self {
      case .untrusted: .certificateUntrusted
      case .otherHost: .certificateHostMismatch
      case .expired: .certificateExpired
      }
    }
    func identity(_ authority: TestCertificateAuthority) -> TestCertificateAuthority.Identity {
      switch self {
      case .untrusted: authority.server
      case .otherHost: authority.otherHostServer
      case .expired: authority.expiredServer
      }
    }
    var description: String {
      switch self {
      case .untrusted: "an authority not trusted"
      case .otherHost: "another host's certificate"
      case .expired: "an expired certificate"
      }
    }
  }

  @Test(arguments: [false, true])
  func requestsInTurnShareOneKeptAliveConnection(sessionTickets: Bool) async throws {
    let nginx = try await NginxTLSServer.start(
      certificate: authority.server, sessionTickets: sessionTickets)
    try nginx.publish("one", as: "one.txt")
    let client = client(nginx)
    var connections: [String] = []
    for _ in 0..<5 {
      let response = try await get(client, "one.txt")
      #expect(response.status == 200)
      connections.append(response.header("X-Connection") ?? "none")
    }
    // One handshake, one connection: nginx numbered every answer's connection the same.
    #expect(Set(connections).count == 1, "connections: \(connections)")
    // Idle long enough for whatever TLS sends after the handshake (session tickets) to
    // arrive: the connection stays idle and is reused.
    try await Task.sleep(for: .milliseconds(200))
    let later = try await get(client, "one.txt")
    #expect(later.header("X-Connection") == connections.first)
    await nginx.stop()
  }

  /// Through `HTTPClient`: a new client's first GET pays the connection and the handshake,
  /// the next ones ride the kept-alive connection. The medians are printed for the docs.
  @Test func aNewConnectionPaysTheHandshakeAKeptAliveOneDoesNot() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish(String(repeating: "x", count: 1024), as: "1k.txt")
    let clock = ContinuousClock()
    var fresh: [Duration] = []
    var reused: [Duration] = []
    for _ in 0..<10 {
      let client = client(nginx)  // the TLS context is the process's, cached
      var start = clock.now
      #expect(try await get(client, "1k.txt").body.count == 1024)
      fresh.append(clock.now - start)
      start = clock.now
      #expect(try await get(client, "1k.txt").body.count == 1024)
      reused.append(clock.now - start)
    }
    await nginx.stop()
    func median(_ values: [Duration]) -> Double {
      let middle = values.sorted()[values.count / 2]
      return Double(middle.components.attoseconds) / 1e15 + Double(middle.components.seconds) * 1e3
    }
    print(
      "HTTPS through HTTPClient (medians of 10): new connection + GET 1 KiB "
        + "\(median(fresh)) ms; GET 1 KiB on the kept-alive connection \(median(reused)) ms")
    #expect(median(reused) < median(fresh))
  }

  @Test func serverSentEventsArriveOverTLS() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("id: 1\ndata: first\n\nid: 2\ndata: second\n\n", as: "events.sse")
    let client = client(nginx)
    var received: [String] = []
    for try await event in client.serverSentEvents(
      for: HTTPRequest(url: nginx.baseURL.appendingPathComponent("events.sse")))
    {
      received.append(event.data)
    }
    #expect(received == ["first", "second"])
    await nginx.stop()
  }

  @Test func anHTTPKeyLoadsOverTLS() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish(json(Item(id: 7, name: "secure")), as: "7.json")
    let client = client(nginx)
    let endpoint = Endpoint<ItemPath, NoBody, Item>.get("/{id}.json")
    @SharedReader(.http(endpoint, ItemPath(id: "7"), client: client, every: .seconds(60)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the value loaded over TLS") { item.name == "secure" }
    #expect($item.loadError == nil)
    await nginx.stop()
  }

  /// The forced fault: the libraries named do not exist, as on a machine without OpenSSL 3.
  /// `https` does not fall back to URLSession: it fails at once, never retried, with a reason
  /// that names the missing library and the way to opt into URLSession; `http` still goes
  /// over the engine; and the executor checks the method token before anything else.
  @Test func forcedFaultWithoutOpenSSLHTTPSFailsWithAReasonInsteadOfFallingBack() async throws {
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    try nginx.publish("hello", as: "hello.txt")
    let client = HTTPClient(
      baseURL: nginx.baseURL, timeout: .seconds(10),
      trustedCertificates: [authority.certificatePEM], proxy: .none,
      openSSLLibraries: ("libssl-missing.so.0", "libcrypto-missing.so.0"),
      plainHTTPOverSockets: true)
    #expect(client.executor.engine?.carries(nginx.baseURL) == false)
    let failure = await #expect(throws: HTTPError.self) {
      _ = try await get(client, "hello.txt")
    }
    guard case .unreachable(_, let reason) = failure else {
      Issue.record("expected unreachable, got \(String(describing: failure))")
      return
    }
    #expect(reason.contains("no transport for https"), "\(reason)")
    #expect(reason.contains("libcrypto-missing.so.0"), "\(reason)")
    #expect(reason.contains("useURLSession()"), "\(reason)")
    // A missing library is no refusal: another attempt, in another process, may find it.
    #expect(reason.tlsRefusal == nil)
    let plain = try TestHTTPServer()
    plain.setDocument("hi", at: "/plain")
    let plainClient = HTTPClient(
      baseURL: plain.baseURL, proxy: .none,
      openSSLLibraries: ("libssl-missing.so.0", "libcrypto-missing.so.0"),
      plainHTTPOverSockets: true)
    #expect(
      try await plainClient.response(for: HTTPRequest(url: plain.url(for: "/plain"))).status == 200)
    let injected = HTTPRequest(
      method: HTTPMethod(rawValue: "GET /x HTTP/1.1\r\nX-Injected: 1\r\nX-B:"),
      url: nginx.baseURL.appendingPathComponent("hello.txt"))
    let refusal = await #expect(throws: HTTPError.self) {
      try await client.response(for: injected)
    }
    guard case .invalidRequest(let reason) = refusal else {
      Issue.record("expected invalidRequest, got \(String(describing: refusal))")
      return
    }
    #expect(reason.contains("is not a token"))
    await nginx.stop()
  }
}
