import Foundation
import Streams
import TestSupport
import Testing
import Tether
import TetherSupport

@testable import TetherHTTP

/// The socket transport (`HTTPClient(…, plainHTTPOverSockets: true)`, what TetherEtcd uses)
/// against a real loopback server answering normally and with hostile responses. Each answer
/// here that URLSession on Linux turns into a process trap (trailers, a connection closed
/// before any answer) must be an ordinary response or a typed `HTTPError`.
@Suite struct SocketTransportTests {
  /// 30 s by default: a full parallel run has stalled every test for up to 13 s at its start,
  /// and a request that waited through that must not be failed for it.
  private func client(
    _ server: TestHTTPServer, timeout: Duration = .seconds(30), limit: Int = 8 << 20
  ) -> HTTPClient {
    HTTPClient(
      baseURL: server.baseURL, timeout: timeout, maximumResponseSize: limit, retryPolicy: .none,
      plainHTTPOverSockets: true)
  }

  private func get(
    _ client: HTTPClient, _ path: String
  ) async throws(HTTPError)
    -> HTTPResponseMessage
  {
    try await client.response(
      for: HTTPRequest(method: .get, url: client.baseURL.appendingPathComponent(path)))
  }

  @Test func typedEndpointsWorkAndConnectionsAreKeptAlive() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    let api = client(server)
    for _ in 0..<5 {
      #expect(try await api.send(Catalog.item, ItemPath(id: "1")) == Item(id: 1, name: "one"))
    }
    #expect(server.connectionCount == 1, "five requests in a row share one connection")
  }

  @Test func aPostCarriesItsBodyAndLength() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/echo") { request in
      HTTPResponse(status: 200, body: request.body)
    }
    let api = client(server)
    let body = Data(#"{"key":"YQ=="}"#.utf8)
    let response = try await api.response(
      for: HTTPRequest(
        method: .post, url: server.url(for: "/echo"),
        headers: ["Content-Type": "application/json"], body: body))
    #expect(response.status == 200)
    #expect(response.body == body)
    let recorded = try #require(server.requests(at: "/echo").first)
    #expect(recorded.header("Content-Length") == "\(body.count)")
    #expect(recorded.header("Content-Type") == "application/json")
  }

  @Test func trailersAreReadAndDropped() async throws {
    // What the etcd gateway sends with its errors; URLSession on Linux traps on it.
    let server = try TestHTTPServer()
    let json = #"{"error":"etcdserver: permission denied","code":7}"#
    server.inject(
      .rawResponse(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
          + "Trailer: Grpc-Trailer-Content-Type\r\nTransfer-Encoding: chunked\r\n\r\n"
          + String(json.utf8.count, radix: 16) + "\r\n" + json + "\r\n0\r\n"
          + "Grpc-Trailer-Content-Type: application/grpc\r\n\r\n"), at: "/v3/kv/put")
    let response = try await get(client(server), "/v3/kv/put")
    #expect(response.status == 403)
    #expect(String(decoding: response.body, as: UTF8.self) == json)
    #expect(response.headers["content-type"] == "application/json")
  }

  @Test func aConnectionClosedBeforeAnyAnswerIsTruncatedNotATrap() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    let api = client(server)
    for fault in [HTTPFault.closeWithoutResponse, .connectionReset] {
      server.inject(fault, at: "/a")
      await #expect {
        try await get(api, "/a")
      } throws: { error in
        guard case .truncated(_, nil, 0) = error as? HTTPError else { return false }
        return true
      }
    }
    #expect(try await get(api, "/a").status == 200, "the client goes on working")
  }

  @Test func aBodyCutShortIsTruncated() async throws {
    let server = try TestHTTPServer()
    server.inject(.truncatedBody(sending: 10, of: Data(repeating: 0x41, count: 100)), at: "/a")
    await #expect {
      try await get(client(server), "/a")
    } throws: { error in
      guard case .truncated(_, 100, 10) = error as? HTTPError else { return false }
      return true
    }
  }

  @Test func somethingThatIsNotHTTPIsUnreachableWithAReason() async throws {
    let server = try TestHTTPServer()
    server.inject(.rawResponse("SSH-2.0-OpenSSH_9.2\r\n\r\n"), at: "/a")
    await #expect {
      try await get(client(server), "/a")
    } throws: { error in
      guard case .unreachable(_, let reason) = error as? HTTPError else { return false }
      return reason.contains("not an HTTP response")
    }
  }

  @Test func interimAnswersAreSkipped() async throws {
    let server = try TestHTTPServer()
    server.inject(
      .rawResponse(
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
          + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), at: "/a")
    let response = try await get(client(server), "/a")
    #expect(response.status == 200)
    #expect(response.body == Data("ok".utf8))
    #expect(response.headers["link"] == nil)
  }

  @Test func aSilentServerTimesOutByTheDeadline() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    server.inject(.delay(.seconds(60)), at: "/a")
    let started = ContinuousClock.now
    await #expect {
      try await get(client(server, timeout: .milliseconds(300)), "/a")
    } throws: { error in
      guard case .timedOut = error as? HTTPError else { return false }
      return true
    }
    // Far sooner than the server's answer; the margin is for a loaded CI machine (a run with
    // the whole suite in parallel once took 5.02 s to resume the test after the timeout).
    #expect(ContinuousClock.now - started < .seconds(20))
  }

  @Test func bodiesStopAtTheSizeLimit() async throws {
    let server = try TestHTTPServer()
    let api = client(server, limit: 4_096)
    for fault in [
      HTTPFault.oversizedBody(byteCount: 100_000),
      .oversizedBody(byteCount: 100_000, chunked: true),
      .endlessBody,
    ] {
      server.inject(fault, at: "/big")
      await #expect {
        try await get(api, "/big")
      } throws: { error in
        guard case .tooLarge(_, 4_096) = error as? HTTPError else { return false }
        return true
      }
    }
  }

  @Test func aRefusedConnectionIsUnreachable() async throws {
    let server = try TestHTTPServer()
    let api = client(server)
    server.stop()
    await #expect {
      try await get(api, "/a")
    } throws: { error in
      guard case .unreachable(_, let reason) = error as? HTTPError else { return false }
      return reason == "connection refused"
    }
  }

  @Test func aHeaderThatWouldSmuggleASecondRequestIsRefused() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    let api = HTTPClient(baseURL: server.baseURL, retryPolicy: .none)
    await #expect {
      try await api.response(
        for: HTTPRequest(
          method: .get, url: server.url(for: "/a"),
          headers: ["X-Note": "a\r\nContent-Length: 0\r\n\r\nGET /b HTTP/1.1"]))
    } throws: { error in
      guard case .invalidRequest = error as? HTTPError else { return false }
      return true
    }
    #expect(server.requestCount == 0)
  }

  @Test func aKeptAliveConnectionTheServerClosedIsReplaced() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    let api = client(server)
    for _ in 0..<3 {
      // Answered without `Connection: close`, then closed: the client kept it for reuse.
      server.inject(.rawResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"), at: "/a")
      #expect(try await get(api, "/a").body == Data("hi".utf8))
    }
    #expect(try await get(api, "/a").status == 200)
  }

  @Test func aPostAfterTheServerClosedTheIdleConnectionGoesOutOnANewOne() async throws {
    let server = try TestHTTPServer()
    let api = client(server)
    for round in 1...3 {
      // Answered without `Connection: close`, then closed: the client kept it for reuse. A
      // POST is never sent twice, so one sent on the closed connection would fail.
      server.inject(.rawResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"), at: "/post")
      let response = try await api.response(
        for: HTTPRequest(method: .post, url: server.url(for: "/post"), body: Data("{}".utf8)))
      #expect(response.body == Data("hi".utf8))
      #expect(server.requestCount(at: "/post") == round)
      try await waitUntil("the server closed the connection") { server.openConnectionCount == 0 }
    }
    #expect(server.connectionCount == 3)
  }

  @Test func aSeeOtherAfterAPostContinuesWithAGet() async throws {
    let server = try TestHTTPServer()
    server.inject(.status(303, headers: ["Location": "/result"]), at: "/form")
    server.setDocument("done", at: "/result")
    let response = try await client(server).response(
      for: HTTPRequest(
        method: .post, url: server.url(for: "/form"),
        headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
    #expect(response.status == 200)
    #expect(response.body == Data("done".utf8))
    let followed = try #require(server.requests(at: "/result").first)
    #expect(followed.method == "GET")
    #expect(followed.header("Content-Type") == nil)
  }

  @Test func onAReusedConnectionThatDiesOnlyIdempotentRequestsAreSentAgain() async throws {
    let server = try TestHTTPServer()
    server.setDocument("{}", at: "/a")
    server.setHandler(at: "/post") { _ in HTTPResponse(status: 200, body: "posted") }
    let api = client(server)
    #expect(try await get(api, "/a").status == 200)  // leaves a kept-alive connection
    // The server reads the next request on it and closes without answering.
    server.inject(.closeWithoutResponse, at: "/a")
    #expect(try await get(api, "/a").status == 200, "a GET is sent again on a new connection")
    #expect(server.requestCount(at: "/a") == 3)

    server.inject(.closeWithoutResponse, at: "/post")
    await #expect {
      try await api.response(for: HTTPRequest(method: .post, url: server.url(for: "/post")))
    } throws: { error in
      // The server may have acted on it: the caller decides, nothing is sent twice.
      guard case .truncated(_, nil, 0) = error as? HTTPError else { return false }
      return true
    }
    #expect(server.requestCount(at: "/post") == 1)
  }

  @Test func streamsHandEachEventOverAsItArrivesAndCancellingClosesThem() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream.serverSentEvents()
    server.injectPersistently(.stream(stream), at: "/events")
    let api = client(server)
    let received = Lock<[String]>([])
    let consumer = Task {
      for try await event in api.serverSentEvents(
        for: HTTPRequest(method: .get, url: server.url(for: "/events")))
      {
        received.withLock { $0.append(event.data) }
      }
    }
    try await stream.waitForClients(1)
    stream.sendEvent("first")
    try await waitUntil { received.withLock { $0 } == ["first"] }
    stream.sendEvent("second")
    try await waitUntil { received.withLock { $0 } == ["first", "second"] }
    consumer.cancel()
    try await stream.waitForNoClients()
  }

  @Test func aStreamTheServerEndsFinishesTheSequence() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream.serverSentEvents()
    server.inject(.stream(stream), at: "/events")
    let api = client(server)
    let consumer = Task {
      var events: [String] = []
      for try await event in api.serverSentEvents(
        for: HTTPRequest(method: .get, url: server.url(for: "/events")))
      {
        events.append(event.data)
      }
      return events
    }
    try await stream.waitForClients(1)
    stream.sendEvent("only")
    stream.finish()
    #expect(try await consumer.value == ["only"])
  }
}

/// The response parser on its own: framing, limits and refusals (a fuzz harness,
/// Tests/Fuzz/HTTP1Response, checks that chunk boundaries never change the result).
@Suite struct HTTP1ResponseParserTests {
  private func parse(_ text: String, head: Bool = false) throws -> [HTTP1ResponseParser.Event] {
    var parser = HTTP1ResponseParser(maximumHeadSize: 1_024, isHeadRequest: head)
    var events = try parser.feed(Array(text.utf8))
    if !parser.isComplete { events += try parser.finish() }
    return events
  }

  private func body(_ events: [HTTP1ResponseParser.Event]) -> String {
    var data = Data()
    for case .body(let piece) in events { data.append(piece) }
    return String(decoding: data, as: UTF8.self)
  }

  @Test func chunkedBodiesWithExtensionsAndTrailers() throws {
    let events = try parse(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Checksum: 1\r\n\r\n")
    #expect(body(events) == "abc0123456789")
    #expect(events.last == .end)
  }

  @Test func framingByLengthByCloseAndNone() throws {
    #expect(body(try parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")) == "abc")
    #expect(body(try parse("HTTP/1.0 200 OK\r\n\r\nuntil the end")) == "until the end")
    #expect(body(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n")) == "")
    #expect(body(try parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", head: true)) == "")
    #expect(body(try parse("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc")) == "abc")
  }

  @Test func keepAliveFollowsTheVersionAndTheConnectionHeader() throws {
    var parser = HTTP1ResponseParser()
    _ = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
    #expect(parser.keepAlive)
    parser = HTTP1ResponseParser()
    _ = try parser.feed(
      Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8))
    #expect(!parser.keepAlive)
    parser = HTTP1ResponseParser()
    _ = try parser.feed(Array("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n".utf8))
    #expect(!parser.keepAlive)
  }

  @Test(arguments: [
    "HTTP/2 200\r\n\r\n",
    "HTTP/1.1 2x0 OK\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: 3 4\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n",
    "HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n",
    "HTTP/1.1 101 Switching Protocols\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nX-A: a\u{0}b\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 2_000) + "\r\n\r\n",
  ])
  func malformedResponsesAreRefused(_ text: String) {
    #expect(throws: HTTP1ResponseParser.Failure.self) { try parse(text) }
  }

  /// RFC 9110 §8.6: one length repeated ("3, 3", as a proxy that merged two equal headers
  /// sends it) is that length.
  @Test func aRepeatedEqualContentLengthIsOneLength() throws {
    var parser = HTTP1ResponseParser()
    let events = try parser.feed(
      Array("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc".utf8))
    #expect(body(events) == "abc")
    #expect(parser.isComplete && parser.keepAlive)
  }

  /// RFC 9112 §6.1, §6.3: faulty framing is read, but the connection is not used again.
  @Test func conflictingOrHTTP10ChunkedFramingClosesTheConnection() throws {
    var parser = HTTP1ResponseParser()
    var events = try parser.feed(
      Array(
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n"
          + "3\r\nabc\r\n0\r\n\r\n").utf8))
    #expect(body(events) == "abc")
    #expect(parser.isComplete && !parser.keepAlive)
    parser = HTTP1ResponseParser()
    events = try parser.feed(
      Array(
        ("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
          + "3\r\nabc\r\n0\r\n\r\n").utf8))
    #expect(body(events) == "abc")
    #expect(parser.isComplete && !parser.keepAlive)
  }

  /// A complete answer is kept when stray bytes follow it; the connection is not reused.
  @Test func strayBytesAfterACompleteAnswerKeepTheAnswer() throws {
    var parser = HTTP1ResponseParser()
    let events = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab".utf8))
    #expect(body(events) == "a")
    #expect(events.last == .end)
    #expect(parser.hasTrailingBytes && !parser.keepAlive)
  }

  @Test func cutOffResponsesFailAtTheEnd() {
    for text in [
      "", "HTTP/1.1 200 OK\r\nContent-Le", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
    ] {
      var parser = HTTP1ResponseParser()
      #expect(throws: HTTP1ResponseParser.Failure.self, "\(text)") {
        _ = try parser.feed(Array(text.utf8))
        _ = try parser.finish()
      }
    }
  }
}
