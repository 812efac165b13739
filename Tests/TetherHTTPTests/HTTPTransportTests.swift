import Foundation
import TestSupport
import Testing
import TetherHTTP

/// The transport's hardening rules, against a real loopback server answering with hostile
/// responses (issue #9, items 3 and 4).
@Suite struct HTTPTransportTests {
  // MARK: - Redirects

  @Test func credentialsAreNeverSentToAnotherOrigin() async throws {
    let origin = try TestHTTPServer()
    let elsewhere = try TestHTTPServer()  // same host, another port: another origin
    elsewhere.setDocument(json(Item(id: 1, name: "moved")), at: "/items/1")
    origin.inject(
      .status(302, headers: ["Location": elsewhere.url(for: "/items/1").absoluteString]),
      at: "/items/1")
    let client = HTTPClient(
      baseURL: origin.baseURL,
      headers: [
        "Authorization": "Bearer secret", "Cookie": "session=secret",
        "Proxy-Authorization": "Basic secret", "X-API-Key": "secret", "X-Trace": "kept",
      ],
      sensitiveHeaders: ["x-api-key"])
    let item = try await client.send(Catalog.item, ItemPath(id: "1"))
    #expect(item.name == "moved")
    #expect(origin.requests.first?.header("Authorization") == "Bearer secret")
    let redirected = try #require(elsewhere.requests.first)
    for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-API-Key"] {
      #expect(redirected.header(name) == nil, "\(name) leaked to another origin")
    }
    #expect(redirected.header("X-Trace") == "kept")
  }

  @Test func aRedirectWithinTheOriginKeepsCredentials() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 2, name: "here")), at: "/items/2")
    server.inject(.status(301, headers: ["Location": "/items/2"]), at: "/items/old")
    let client = HTTPClient(
      baseURL: server.baseURL, headers: ["Authorization": "Bearer t"])
    let item = try await client.send(Catalog.item, ItemPath(id: "old"))
    #expect(item.id == 2)
    #expect(server.requests(at: "/items/2").first?.header("Authorization") == "Bearer t")
  }

  @Test func aRedirectLoopStopsAfterAHandful() async throws {
    let server = try TestHTTPServer()
    server.injectPersistently(.status(302, headers: ["Location": "/items/1"]), at: "/items/1")
    let client = HTTPClient(baseURL: server.baseURL, maximumRedirects: 3)
    await #expect {
      try await client.send(Catalog.item, ItemPath(id: "1"))
    } throws: { error in
      guard case .redirectRefused(_, let reason) = error as? HTTPError else { return false }
      return reason.contains("more than 3")
    }
    #expect(server.requestCount(at: "/items/1") == 4)
  }

  // MARK: - Size limit bounds memory

  // Peak memory is measured in a second process (`tether-http-probe`) that does nothing but
  // this one request, so tests running in parallel cannot disturb the figure.

  @Test func aGzipBombStopsAtTheLimitWithinASmallMultipleOfIt() async throws {
    let server = try TestHTTPServer()
    server.inject(.gzipBomb(decompressedByteCount: 512 << 20), at: "/items")
    let (outcome, growth) = try await Probe.run(server.url(for: "/items"), limit: 1 << 20)
    // The engine never inflates and refuses a coding it did not accept.
    #expect(outcome == "undecodable")
    #expect(growth < 64 << 20, "peak grew by \(growth >> 20) MiB over a 1 MiB limit")
  }

  @Test func anEndlessBodyStopsAtTheLimitWithinASmallMultipleOfIt() async throws {
    let server = try TestHTTPServer()
    server.inject(.endlessBody, at: "/items")
    let (outcome, growth) = try await Probe.run(server.url(for: "/items"), limit: 1 << 20)
    #expect(outcome == "tooLarge")
    #expect(growth < 64 << 20, "peak grew by \(growth >> 20) MiB over a 1 MiB limit")
  }

  @Test func overSocketsABombIsNeverInflated() async throws {
    let server = try TestHTTPServer()
    server.inject(.gzipBomb(decompressedByteCount: 16 << 20), at: "/items")
    server.inject(.gzipBomb(decompressedByteCount: 16 << 20), at: "/raw")
    let client = HTTPClient(baseURL: server.baseURL, maximumResponseSize: 1 << 20)
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      guard case .undecodable(_, _, let reason) = error as? HTTPError else { return false }
      return reason.contains("gzip")
    }
    await #expect {
      try await client.response(for: HTTPRequest(method: .get, url: server.url(for: "/raw")))
    } throws: { error in
      guard case .undecodable(_, _, let reason) = error as? HTTPError else { return false }
      return reason.contains("gzip-encoded body although only identity was accepted")
    }
    let asked = try #require(server.requests(at: "/raw").first)
    #expect(asked.header("Accept-Encoding") == "identity")
  }

  // MARK: - Timeouts and cancellation

  @Test func aSlowServerTimesOut() async throws {
    let server = try TestHTTPServer()
    server.setDocument("[]", at: "/items")
    server.inject(.delay(.seconds(5)), at: "/items")
    let client = HTTPClient(
      baseURL: server.baseURL, timeout: .milliseconds(300), retryPolicy: .none)
    await #expect {
      try await client.send(Catalog.items)
    } throws: { error in
      if case .timedOut = error as? HTTPError { return true } else { return false }
    }
  }

  @Test func cancellingTheTaskCancelsTheRequest() async throws {
    let server = try TestHTTPServer()
    server.setDocument("[]", at: "/items")
    server.inject(.delay(.seconds(10)), at: "/items")
    let client = HTTPClient(baseURL: server.baseURL)
    let task = Task { try await client.send(Catalog.items) }
    try await server.waitForRequests(1, at: "/items")
    task.cancel()
    await #expect(throws: HTTPError.cancelled) { try await task.value }
  }
}

@Suite struct StreamingResponseTests {
  @Test func chunksArriveAsTheServerSendsThemAndTheEndIsReported() async throws {
    let server = try TestHTTPServer()
    let watch = HTTPStream(headers: ["X-Revision": "7"])
    server.inject(.stream(watch), at: "/watch")
    let client = HTTPClient(baseURL: server.baseURL)
    let response = try await client.streamingResponse(
      for: HTTPRequest(url: server.url(for: "/watch")))
    #expect(response.status == 200)
    #expect(response.headers["x-revision"] == "7")
    var iterator = response.body.makeAsyncIterator()
    watch.send("first\n")
    #expect(try await iterator.next().map { String(decoding: $0, as: UTF8.self) } == "first\n")
    watch.send("second\n")
    #expect(try await iterator.next().map { String(decoding: $0, as: UTF8.self) } == "second\n")
    watch.finish()
    #expect(try await iterator.next() == nil)
  }

  @Test func droppingTheBodyClosesTheConnection() async throws {
    let server = try TestHTTPServer()
    let watch = HTTPStream()
    server.inject(.stream(watch), at: "/watch")
    let client = HTTPClient(baseURL: server.baseURL)
    let task = Task {
      let response = try await client.streamingResponse(
        for: HTTPRequest(url: server.url(for: "/watch")))
      for try await _ in response.body {}
    }
    try await watch.waitForClients(1)
    task.cancel()
    try await watch.waitForNoClients()
  }

  @Test func anAbortedStreamThrows() async throws {
    let server = try TestHTTPServer()
    let watch = HTTPStream()
    server.inject(.stream(watch), at: "/watch")
    let client = HTTPClient(baseURL: server.baseURL)
    let response = try await client.streamingResponse(
      for: HTTPRequest(url: server.url(for: "/watch")))
    watch.send("partial")
    watch.abort()
    await #expect(throws: HTTPError.self) {
      for try await _ in response.body {}
    }
  }
}
