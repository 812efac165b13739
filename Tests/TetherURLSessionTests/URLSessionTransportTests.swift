import Foundation
import TestSupport
import Testing
import TetherHTTP
import TetherURLSession

/// A client that opted into URLSession (`useURLSession()`) against a real loopback server: the
/// executor's rules (redirects, credentials, the size limit, the request checks) hold over
/// URLSession as they do over the engine.
@Suite struct URLSessionTransportTests {
  @Test func aClientThatOptedInSendsThroughURLSession() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"{"ok":true}"#, at: "/status")
    let client = HTTPClient(baseURL: server.baseURL, proxy: .none).useURLSession()
    let response = try await client.response(for: HTTPRequest(url: server.url(for: "/status")))
    #expect(response.status == 200)
    #expect(response.body == Data(#"{"ok":true}"#.utf8))
    // URLSession asks for compressed bodies; the engine asks for none (`identity`).
    let asked = try #require(server.requests(at: "/status").first)
    #expect(asked.header("Accept-Encoding") != "identity")
  }

  @Test func theSizeLimitStopsAnInflatedBomb() async throws {
    let server = try TestHTTPServer()
    server.inject(.gzipBomb(decompressedByteCount: 16 << 20), at: "/items")
    let limit = 1 << 20
    // URLSession inflates what it receives (the engine refuses the coding): the limit stops it.
    let client = HTTPClient(baseURL: server.baseURL, maximumResponseSize: limit, proxy: .none)
      .useURLSession()
    await #expect(
      throws: HTTPError.tooLarge(url: server.url(for: "/items").absoluteString, limit: limit)
    ) {
      try await client.response(for: HTTPRequest(url: server.url(for: "/items")))
    }
  }

  @Test func credentialsAreNeverSentToAnotherOrigin() async throws {
    let origin = try TestHTTPServer()
    let elsewhere = try TestHTTPServer()  // same host, another port: another origin
    elsewhere.setDocument("moved", at: "/items/1")
    origin.inject(
      .status(302, headers: ["Location": elsewhere.url(for: "/items/1").absoluteString]),
      at: "/items/1")
    let client = HTTPClient(
      baseURL: origin.baseURL,
      headers: ["Authorization": "Bearer secret", "X-API-Key": "secret", "X-Trace": "kept"],
      sensitiveHeaders: ["x-api-key"], proxy: .none
    ).useURLSession()
    let response = try await client.response(for: HTTPRequest(url: origin.url(for: "/items/1")))
    #expect(response.body == Data("moved".utf8))
    let redirected = try #require(elsewhere.requests.first)
    #expect(redirected.header("Authorization") == nil)
    #expect(redirected.header("X-API-Key") == nil)
    #expect(redirected.header("X-Trace") == "kept")
  }

  @Test func aRedirectLoopStopsAfterAHandful() async throws {
    let server = try TestHTTPServer()
    server.injectPersistently(.status(302, headers: ["Location": "/items/1"]), at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL, maximumRedirects: 3, proxy: .none)
      .useURLSession()
    await #expect {
      try await client.response(for: HTTPRequest(url: server.url(for: "/items/1")))
    } throws: { error in
      guard case .redirectRefused(_, let reason) = error as? HTTPError else { return false }
      return reason.contains("more than 3")
    }
    #expect(server.requestCount(at: "/items/1") == 4)
  }

  @Test func aHeaderThatWouldSmuggleASecondRequestIsRefused() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    // URLSession would otherwise drop the header without a word.
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: .none, proxy: .none)
      .useURLSession()
    await #expect {
      try await client.response(
        for: HTTPRequest(
          method: .get, url: server.url(for: "/a"),
          headers: ["X-Note": "a\r\nContent-Length: 0\r\n\r\nGET /b HTTP/1.1"]))
    } throws: { error in
      guard case .invalidRequest = error as? HTTPError else { return false }
      return true
    }
    #expect(server.requestCount == 0)
  }

  // Headers go to URLSession in one assignment; a request whose names repeat in another case
  // (possible through the public `headers` dictionary) still sends each name once.
  @Test func aNameRepeatedInAnotherCaseIsSentOnce() async throws {
    let server = try TestHTTPServer()
    _ = try server.setJSONDocument(["ok": true], at: "/doc")
    let client = HTTPClient(baseURL: server.baseURL, proxy: .none).useURLSession()
    let request = HTTPRequest(
      url: server.url(for: "/doc"),
      headers: ["Accept": "application/json", "accept": "application/json", "X-One": "1"])
    #expect(try await client.response(for: request).status == 200)
    let fields = try #require(server.requests(at: "/doc").last).headerFields
    #expect(fields.filter { $0.name.lowercased() == "accept" }.count == 1)
    #expect(fields.contains { $0.name.lowercased() == "x-one" && $0.value == "1" })
  }
}
