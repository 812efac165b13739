import Foundation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherHTTP
import TetherSupport

@Suite struct HTTPClientTests {
  static let fast = HTTPRetryPolicy(
    maximumAttempts: 3, initialDelay: .milliseconds(10), maximumDelay: .seconds(1))

  @Test func idempotentRequestsAreRetriedAfterTransientFailures() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    server.inject(.status(503), at: "/items/1")
    server.inject(.connectionReset, at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: Self.fast)
    #expect(try await client.send(Catalog.item, ItemPath(id: "1")).name == "one")
    #expect(server.requestCount(at: "/items/1") == 3)
  }

  @Test func aPostIsNeverRetried() async throws {
    let server = try TestHTTPServer()
    server.inject(.status(503), at: "/items")
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: Self.fast)
    await #expect {
      try await client.send(Catalog.create, body: Item(id: 1, name: "x"))
    } throws: { ($0 as? HTTPError)?.statusCode == 503 }
    #expect(server.requestCount(at: "/items") == 1)
  }

  @Test func retryAfterIsHonouredAndAnExcessiveOneIsThrownAtOnce() async throws {
    let server = try TestHTTPServer()
    server.setDocument("[]", at: "/items")
    server.inject(.status(429, retryAfter: .seconds(1)), at: "/items")
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: Self.fast)
    _ = try await client.send(Catalog.items)
    let requests = server.requests(at: "/items")
    #expect(requests.count == 2)
    #expect(requests[1].arrival - requests[0].arrival >= .milliseconds(900))

    server.inject(.status(429, retryAfter: .raw("9223372036854775807")), at: "/items")
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      guard let error = error as? HTTPError else { return false }
      return error.statusCode == 429 && error.retryAfter == 86_400
    }
    #expect(server.requestCount(at: "/items") == 3)
  }

  @Test func interceptorsPrepareRequestsAndCanRetryOnce() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/items") { request in
      request.header("Authorization") == "Bearer fresh"
        ? HTTPResponse(status: 200, body: "[]") : HTTPResponse(status: 401)
    }
    let token = Lock("stale")
    let refreshes = Lock(0)
    let auth = HTTPInterceptor(
      prepare: { request in request.setHeader("Authorization", "Bearer \(token.withLock { $0 })") },
      inspect: { _, response in
        guard response.status == 401 else { return .proceed }
        refreshes.withLock { $0 += 1 }
        token.withLock { $0 = "fresh" }
        return .retry
      })
    let client = HTTPClient(baseURL: server.baseURL, interceptors: [auth])
    #expect(try await client.send(Catalog.items).isEmpty)
    #expect(refreshes.withLock { $0 } == 1)
    #expect(
      server.requests(at: "/items").map { $0.header("Authorization") } == [
        "Bearer stale", "Bearer fresh",
      ])
  }

  @Test func credentialsNeverAppearInErrors() async throws {
    let server = try TestHTTPServer()
    server.inject(.status(500, body: "boom"), at: "/items")
    var components = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false)!
    components.user = "alice"
    components.password = "hunter2"
    components.query = "api_key=topsecret"
    let client = HTTPClient(
      baseURL: components.url!, headers: ["Authorization": "Bearer topsecret"],
      retryPolicy: .none)
    do {
      _ = try await client.send(Catalog.items)
      Issue.record("expected an error")
    } catch {
      for text in ["\(error)", error.localizedDescription, String(reflecting: error)] {
        #expect(!text.contains("topsecret"), "\(text)")
        #expect(!text.contains("hunter2"), "\(text)")
      }
      #expect(error.statusCode == 500)
    }
  }

  @Test func anUnreachableServerIsReportedAsSuch() async throws {
    let closed = try TestHTTPServer()
    let url = closed.baseURL
    closed.stop()
    let client = HTTPClient(baseURL: url, retryPolicy: .none)
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      if case .unreachable = error as? HTTPError { return true } else { return false }
    }
  }

  @Test func aCutOffBodyIsTruncated() async throws {
    let server = try TestHTTPServer()
    server.inject(.truncatedBody(sending: 10), at: "/items")
    let client = HTTPClient(baseURL: server.baseURL, retryPolicy: .none)
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      if case .truncated(_, _, 10) = error as? HTTPError { return true } else { return false }
    }
  }
}

@Suite struct HTTPRequestTests {
  @Test func headerNamesAreMatchedIgnoringASCIICaseOnly() {
    var request = HTTPRequest(url: URL(string: "http://example.com/")!)
    request.setHeader("X-Goog-Firebase-Installations-Auth", "one")
    request.setHeader("x-goog-firebase-installations-auth", "two")
    #expect(request.headers == ["x-goog-firebase-installations-auth": "two"])
    #expect(request.header("X-GOOG-FIREBASE-INSTALLATIONS-AUTH") == "two")
    // Only letters fold: `[` is `{` with the case bit, `-` is not `_`, and lengths must match.
    request.setHeader("A[", "bracket")
    #expect(request.header("a{") == nil)
    #expect(request.header("a[") == "bracket")
    request.setHeader("X-Id", "dash")
    #expect(request.header("X_Id") == nil)
    #expect(request.header("X-Ids") == nil)
  }

  // Headers go to the transport in one assignment; a request whose names repeat in another
  // case (possible through the public `headers` dictionary) still sends each name once.
  @Test func aNameRepeatedInAnotherCaseIsSentOnce() async throws {
    let server = try TestHTTPServer()
    defer { server.stop() }
    _ = try server.setJSONDocument(["ok": true], at: "/doc")
    let client = HTTPClient(baseURL: server.baseURL, headers: [:])
    let request = HTTPRequest(
      url: server.url(for: "/doc"),
      headers: ["Accept": "application/json", "accept": "application/json", "X-One": "1"])
    #expect(try await client.response(for: request).status == 200)
    let fields = try #require(server.requests(at: "/doc").last).headerFields
    #expect(fields.filter { $0.name.lowercased() == "accept" }.count == 1)
    #expect(fields.contains { $0.name.lowercased() == "x-one" && $0.value == "1" })
  }

  @Test func printingARequestHidesItsCredentials() {
    let request = HTTPRequest(
      method: .post, url: URL(string: "https://user:pw@api.example.com/items?token=t0p")!,
      headers: ["Authorization": "Bearer t0p", "X-API-Key": "t0p", "Accept": "application/json"],
      body: Data("{}".utf8))
    for text in ["\(request)", String(reflecting: request)] {
      #expect(!text.contains("t0p"), "\(text)")
      #expect(!text.contains("pw"), "\(text)")
      #expect(text.contains("POST https://api.example.com/items"))
      #expect(text.contains("Authorization: <redacted>"))
      #expect(text.contains("Accept: application/json"))
    }
  }
}
