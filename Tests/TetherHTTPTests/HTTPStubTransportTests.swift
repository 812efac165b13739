import Foundation
import Synchronization
import TestSupport
import Testing
import Tether
import TetherHTTP
import TetherTesting

/// `HTTPStubTransport`: a client on it behaves as on a real server — the executor's
/// interceptors, retries, timeout and validation still run — and nothing reaches a network.
@Suite(.isolatedSharedState) struct HTTPStubTransportTests {
  static let base = URL(string: "https://api.example.test")!

  @Test func cannedAnswersByMethodAndPathDecodeThroughEndpoints() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/1", .json(Item(id: 1, name: "one")))
    server.on(.get, "/items/*", .json(Item(id: 9, name: "any")))
    server.on(.post, "/items/1", .status(201))
    let client = HTTPClient(baseURL: Self.base, transport: server)

    // The route added last for a method and path wins.
    #expect(try await client.send(Catalog.item, ItemPath(id: "1")) == Item(id: 9, name: "any"))
    server.on(.get, "/items/1", .json(Item(id: 1, name: "one")))
    #expect(try await client.send(Catalog.item, ItemPath(id: "1")) == Item(id: 1, name: "one"))
    #expect(try await client.send(Catalog.item, ItemPath(id: "7")) == Item(id: 9, name: "any"))

    // An unmatched request is a 404 that names it.
    let missing = try await client.response(
      for: HTTPRequest(method: .delete, url: Self.base.appending(path: "items/1")))
    #expect(missing.status == 404)
    #expect(String(decoding: missing.body, as: UTF8.self).contains("DELETE /items/1"))
  }

  @Test func recordsRequestsAsSentAfterDefaultHeadersAndInterceptors() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/*", .json(Item(id: 2, name: "two")))
    let signing = HTTPInterceptor(prepare: { $0.setHeader("X-Signature", "signed") })
    let client = HTTPClient(
      baseURL: Self.base, headers: ["Authorization": "Bearer t"], interceptors: [signing],
      transport: server)

    _ = try await client.send(Catalog.item, ItemPath(id: "2"))

    let sent = try #require(server.requests(.get, "/items/2").first)
    #expect(sent.url.absoluteString == "https://api.example.test/items/2")
    #expect(sent.header("Authorization") == "Bearer t")
    #expect(sent.header("X-Signature") == "signed")
    #expect(server.requests.count == 1)
  }

  struct Owner: Encodable, Hashable, Sendable {
    var user: String
  }

  // Guards: routes matched the decoded path, so a `/` sent as `%2F` inside one segment split
  // it there and `/users/*/repos` never matched.
  @Test func routesMatchThePathAsSentWithAnEncodedSlashInsideOneSegment() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/users/*/repos", .json([Item(id: 1, name: "repo")]))
    server.on(.get, "/files/a b", .text("spaced"))
    let client = HTTPClient(baseURL: Self.base, transport: server)
    let repos = Endpoint<Owner, NoBody, [Item]>.get("/users/{user}/repos")

    #expect(try await client.send(repos, Owner(user: "team/app")) == [Item(id: 1, name: "repo")])
    let sent = try #require(server.requests(.get, "/users/team%2Fapp/repos").first)
    #expect(sent.url.absoluteString == "https://api.example.test/users/team%2Fapp/repos")
    #expect(server.requests(.get, "/users/*/repos").count == 1)
    // A route may spell a segment decoded; the request is matched as sent, `%20`.
    let spaced = try await client.response(
      for: HTTPRequest(url: URL(string: "https://api.example.test/files/a%20b")!))
    #expect(String(decoding: spaced.body, as: UTF8.self) == "spaced")
  }

  // Guards: recorded requests left out `User-Agent` and `Accept-Encoding`, which the socket
  // transport sends; the stub's record and a real server's agree on them now.
  @Test func recordedRequestsCarryTheHeadersTheSocketTransportSends() async throws {
    let real = try TestHTTPServer()
    defer { real.stop() }
    real.setDocument("{}", at: "/a")
    let stub = HTTPStubTransport()
    stub.on(.get, "/a", .text("{}"))
    let headers = ["X-Mine": "1", "Connection": "close"]
    _ = try await HTTPClient(baseURL: real.baseURL, headers: headers, retryPolicy: .none)
      .response(for: HTTPRequest(url: real.url(for: "/a")))
    _ = try await HTTPClient(baseURL: Self.base, headers: headers, transport: stub)
      .response(for: HTTPRequest(url: Self.base.appending(path: "a")))
    let onTheWire = try #require(real.requests.first)
    let recorded = try #require(stub.requests.first)
    for name in ["User-Agent", "Accept-Encoding", "X-Mine"] {
      #expect(recorded.header(name) != nil, "\(name) was not recorded")
      #expect(recorded.header(name) == onTheWire.header(name), "\(name)")
    }
    // Framing is the transport's own: a caller's `Connection` is not sent as given.
    #expect(recorded.header("Connection") == nil)
    // A request's own value wins, on the wire and in the record.
    _ = try await HTTPClient(baseURL: Self.base, transport: stub).response(
      for: HTTPRequest(url: Self.base.appending(path: "a"), headers: ["User-Agent": "mine/1"]))
    #expect(stub.requests.last?.header("User-Agent") == "mine/1")
  }

  @Test func transientStatusesAreRetriedAndFinalStatusesThrown() async throws {
    let server = HTTPStubTransport()
    server.on(
      .get, "/items/1",
      sequence: [.status(503), .status(503), .json(Item(id: 1, name: "third time"))])
    server.on(.get, "/items/2", .text("gone", status: 410))
    let client = HTTPClient(
      baseURL: Self.base,
      retryPolicy: HTTPRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1)),
      transport: server)

    #expect(try await client.send(Catalog.item, ItemPath(id: "1")).name == "third time")
    #expect(server.requests(.get, "/items/1").count == 3)

    do {
      _ = try await client.send(Catalog.item, ItemPath(id: "2"))
      Issue.record("a 410 answer was decoded")
    } catch {
      #expect(error.statusCode == 410)
    }
    #expect(server.requests(.get, "/items/2").count == 1)
  }

  @Test func injectedFailuresReachTheCallerAfterRetries() async throws {
    let server = HTTPStubTransport()
    server.on(
      .get, "/items/1", .failure(.unreachable(url: "https://api.example.test", reason: "down")))
    let client = HTTPClient(
      baseURL: Self.base,
      retryPolicy: HTTPRetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(1)),
      transport: server)

    do {
      _ = try await client.send(Catalog.item, ItemPath(id: "1"))
      Issue.record("an unreachable server answered")
    } catch {
      #expect(error == .unreachable(url: "https://api.example.test", reason: "down"))
    }
    // The failure is transient and the request idempotent: it was tried twice.
    #expect(server.requests.count == 2)
  }

  @Test(.heavy) func latencyBeyondTheClientTimeoutIsATimeout() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/1", .json(Item(id: 1, name: "slow")).delayed(by: .seconds(60)))
    server.on(.get, "/items/2", .json(Item(id: 2, name: "quick")).delayed(by: .milliseconds(20)))
    let client = HTTPClient(
      baseURL: Self.base, timeout: .milliseconds(200), retryPolicy: .none, transport: server)

    let started = ContinuousClock.now
    do {
      _ = try await client.send(Catalog.item, ItemPath(id: "1"))
      Issue.record("a 60 s answer beat a 200 ms timeout")
    } catch {
      guard case .timedOut = error else {
        Issue.record("expected a timeout, got \(error)")
        return
      }
    }
    // The timeout cut the wait short; the bound is loose for a machine busy with other tests.
    #expect(ContinuousClock.now - started < .seconds(30))
    #expect(try await client.send(Catalog.item, ItemPath(id: "2")).name == "quick")
  }

  @Test func theSizeLimitAppliesToStubbedBodies() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/1", .status(200, body: Data(repeating: 0x20, count: 4096)))
    let client = HTTPClient(baseURL: Self.base, maximumResponseSize: 1024, transport: server)

    do {
      _ = try await client.response(
        for: HTTPRequest(method: .get, url: Self.base.appending(path: "items/1")))
      Issue.record("a 4 KiB body passed a 1 KiB limit")
    } catch {
      guard case .tooLarge(_, 1024) = error else {
        Issue.record("expected tooLarge, got \(error)")
        return
      }
    }
  }

  @Test func invalidRequestsAreRejectedBeforeTheStub() async throws {
    let server = HTTPStubTransport()
    let client = HTTPClient(baseURL: Self.base, transport: server)
    var request = HTTPRequest(method: .get, url: Self.base)
    request.headers["X-Smuggled"] = "a\r\nHost: evil"

    do {
      _ = try await client.response(for: request)
      Issue.record("a header with a line break was sent")
    } catch {
      guard case .invalidRequest = error else {
        Issue.record("expected invalidRequest, got \(error)")
        return
      }
    }
    #expect(server.requests.isEmpty)
  }

  @Test func serverSentEventsArriveInOrderAsTheTestPushesThem() async throws {
    let server = HTTPStubTransport()
    let (events, push) = AsyncStream<ServerSentEvent>.makeStream()
    server.on(.get, "/feed", .events(events))
    let client = HTTPClient(baseURL: Self.base, transport: server)
    var received = client.serverSentEvents(
      for: HTTPRequest(method: .get, url: Self.base.appending(path: "feed"))
    ).makeAsyncIterator()

    push.yield(ServerSentEvent(event: "price", data: "3", id: "1"))
    #expect(try await received.next() == ServerSentEvent(event: "price", data: "3", id: "1"))
    push.yield(ServerSentEvent(data: "line one\nline two"))
    #expect(try await received.next() == ServerSentEvent(data: "line one\nline two", id: "1"))
    push.finish()
    #expect(try await received.next() == nil)
    #expect(server.requests.first?.header("Accept") == "text/event-stream")
  }

  @Test func anHTTPKeyLoadsAndFollowsEventsWithoutAServer() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/1", .json(Item(id: 1, name: "one")))
    let (events, push) = AsyncStream<ServerSentEvent>.makeStream()
    server.on(.get, "/items/1/events", .events(events))
    let client = HTTPClient(baseURL: Self.base, transport: server)

    @SharedReader(
      .http(
        Catalog.item, ItemPath(id: "1"), client: client,
        updates: .serverSentEvents(HTTPKeyTests.events, ItemPath(id: "1"))))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the loaded value") { item.name == "one" }

    push.yield(ServerSentEvent(data: #"{"id": 1, "name": "pushed"}"#))
    try await waitUntil("the pushed value") { item.name == "pushed" }
    #expect($item.loadError == nil)
  }

  @Test func aStatusAnswerToAnHTTPKeySetsLoadErrorAndKeepsTheDefault() async throws {
    let server = HTTPStubTransport()
    server.on(.get, "/items/1", .text("no such item", status: 404))
    let client = HTTPClient(baseURL: Self.base, transport: server)

    @SharedReader(.http(Catalog.item, ItemPath(id: "1"), client: client, every: .seconds(60)))
    var item = Item(id: 0, name: "default")
    try await waitUntil("the load error") { $item.loadError != nil }
    #expect(item.name == "default")
    #expect(($item.loadError as? HTTPError)?.statusCode == 404)
  }
}
