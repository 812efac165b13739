import Foundation
import TestSupport
import Testing
import TetherHTTP
import TetherRemoteConfig

/// What goes on the wire besides the caller's intent: a path parameter never moves the request
/// to another path, a host never names another one, every entry point sends the client's
/// default headers, and a credential header never follows a redirect to another origin.
@Suite struct HTTPRequestHygieneTests {
  struct UserPath: Encodable, Hashable, Sendable {
    var user: String
  }

  static let repos = Endpoint<UserPath, NoBody, [Item]>.get("/users/{user}/repos")

  // Guards: a placeholder filled with `..` or `.` was sent as `%2E%2E` or `%2E`, which servers
  // and proxies decode and resolve as a dot-segment (`/users/../repos` is `/repos`). As
  // Retrofit does, such a value is refused with a typed error and nothing is sent.
  @Test(arguments: ["..", "."])
  func dotSegmentsInPathParametersAreRefused(_ user: String) async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(10), retryPolicy: .none)
    let error = await #expect(throws: HTTPError.self) {
      try await client.send(Self.repos, UserPath(user: user))
    }
    guard case .invalidRequest(let reason) = error else {
      Issue.record("expected invalidRequest, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("dot-segment"), "\(reason)")
    #expect(server.requests.isEmpty, "the request was sent: \(server.requests)")
  }

  // Guards: `https://localhost%00.evil.test/` went to, and was verified for, `localhost`:
  // resolution, SNI and the certificate check stop at the NUL while `Host` and `CONNECT` carry
  // the whole name (and a CR LF in the host ended the `Host` line). Such a host is refused
  // with a typed error before any connection, direct or through a proxy, plain or TLS.
  @Test(arguments: ["http", "https"])
  func aHostWithAControlCharacterIsRefusedBeforeAnyConnection(scheme: String) async throws {
    let server = try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      try connection.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    }
    defer { server.stop() }
    let hosts = ["127.0.0.1%00.evil.test", "127.0.0.1%0D%0AX-Injected", "127.0.0.1%7F"]
    let hostile = try #require(URL(string: "http://127.0.0.1%00.evil.test:\(server.port)"))
    for proxy in [HTTPProxy.none, .all(server.baseURL)] {
      let client = HTTPClient(
        baseURL: server.baseURL, timeout: .seconds(5), retryPolicy: .none, proxy: proxy)
      for host in hosts {
        let url = try #require(URL(string: "\(scheme)://\(host):\(server.port)/a"))
        try await Self.expectHostRefused(client, url)
      }
    }
    // A proxy whose own host holds a NUL is refused the same way.
    let client = HTTPClient(
      baseURL: server.baseURL, timeout: .seconds(5), retryPolicy: .none, proxy: .all(hostile))
    try await Self.expectHostRefused(client, server.url(for: "/a"))
    #expect(server.connectionCount == 0, "requests: \(server.requests)")
  }

  // Guards: a redirect's target was not checked like the request's own URL.
  @Test func aRedirectToAHostWithAControlCharacterIsRefused() async throws {
    let server = try HostileServer { connection in
      while let request = try connection.readRequest() {
        // Host is 127.0.0.1:<port>: the same server, under a name with a NUL.
        let target = (request.header("Host") ?? "").replacingOccurrences(
          of: "127.0.0.1", with: "127.0.0.1%00.evil.test")
        try connection.send(
          "HTTP/1.1 302 Found\r\nLocation: http://\(target)/b\r\nContent-Length: 0\r\n\r\n")
      }
    }
    defer { server.stop() }
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(5), retryPolicy: .none)
    let error = await #expect(throws: HTTPError.self) {
      try await client.response(for: HTTPRequest(url: server.url(for: "/a")))
    }
    guard case .redirectRefused = error else {
      Issue.record("expected redirectRefused, got \(String(describing: error))")
      return
    }
    #expect(server.requests.map(\.target) == ["/a"])
  }

  private static func expectHostRefused(_ client: HTTPClient, _ url: URL) async throws {
    let error = await #expect(throws: HTTPError.self, "\(url)") {
      try await client.response(for: HTTPRequest(url: url))
    }
    guard case .invalidRequest(let reason) = error else {
      Issue.record("\(url): expected invalidRequest, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("host"), "\(reason)")
  }

  // Guards: `response(for:)` did not add the client's default headers.
  @Test func responseForSendsTheClientsDefaultHeaders() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    let client = HTTPClient(
      baseURL: server.baseURL, headers: ["X-Client": "tether-tests", "Authorization": "Bearer t"],
      timeout: .seconds(10), retryPolicy: .none)
    let response = try await client.response(
      for: HTTPRequest(url: server.url(for: "/a"), headers: ["X-Request": "1"]))
    #expect(response.status == 200)
    let recorded = try #require(server.requests(at: "/a").first)
    #expect(recorded.header("X-Client") == "tether-tests")
    #expect(recorded.header("Authorization") == "Bearer t")
    #expect(recorded.header("X-Request") == "1")
  }

  // Guards: `HTTPConfigSource` forwarded `X-API-Key` across a redirect to another origin (it
  // did not mark its credential headers sensitive).
  @Test func aConfigSourcesAPIKeyNeverFollowsARedirectToAnotherOrigin() async throws {
    let origin = try TestHTTPServer()
    let elsewhere = try TestHTTPServer()
    elsewhere.setDocument(#"{"flag":"on"}"#, at: "/config.json")
    origin.injectPersistently(
      .status(302, headers: ["Location": elsewhere.url(for: "/config.json").absoluteString]),
      at: "/config.json")
    let source = HTTPConfigSource(
      url: origin.url(for: "/config.json"), headers: ["X-API-Key": "secret-key-123"])
    // 30 s: a full parallel run has stalled every test for up to 13 s at its start.
    _ = try? await source.fetch(ConfigFetchRequest(previousVersion: nil, timeout: 30))
    let first = try #require(origin.requests(at: "/config.json").first)
    #expect(first.header("X-API-Key") == "secret-key-123", "the origin itself gets the key")
    let redirected = try #require(
      elsewhere.requests(at: "/config.json").first, "the redirect was followed")
    #expect(redirected.header("X-API-Key") == nil, "the other origin received the API key")
  }
}
