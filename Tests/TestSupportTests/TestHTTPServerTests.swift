import Foundation
import TestSupport
import Testing

@Suite struct TestHTTPServerTests {
  @Test func servesADocumentWithBodyAndHeaders() async throws {
    let server = try TestHTTPServer()
    let document = server.setDocument(
      #"{"welcome_title":"Hi"}"#, at: "/config.json", headers: ["Cache-Control": "no-store"])

    let (body, response) = try await HTTPClient.fetch(server.url(for: "/config.json"))

    #expect(response.statusCode == 200)
    #expect(String(decoding: body, as: UTF8.self) == #"{"welcome_title":"Hi"}"#)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(response.value(forHTTPHeaderField: "Content-Length") == String(body.count))
    #expect(response.value(forHTTPHeaderField: "ETag") == document.etag)
    #expect(response.value(forHTTPHeaderField: "Cache-Control") == "no-store")
    #expect(response.value(forHTTPHeaderField: "Last-Modified") == nil)
  }

  @Test func answersIfNoneMatchWith304WhileTheETagMatches() async throws {
    let server = try TestHTTPServer()
    let first = server.setDocument("v1", at: "/c")

    let (notModifiedBody, notModified) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-None-Match": first.etag])
    #expect(notModified.statusCode == 304)
    #expect(notModifiedBody.isEmpty)
    #expect(notModified.value(forHTTPHeaderField: "ETag") == first.etag)

    let second = server.setDocument("v2", at: "/c")
    #expect(second.etag != first.etag)
    let (body, changed) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-None-Match": first.etag])
    #expect(changed.statusCode == 200)
    #expect(String(decoding: body, as: UTF8.self) == "v2")
    #expect(changed.value(forHTTPHeaderField: "ETag") == second.etag)
    let sent = server.requests(at: "/c").map { $0.header("if-none-match") }
    #expect(sent == [first.etag, first.etag])
  }

  @Test(arguments: [
    (#""other", "ETAG""#, 304), ("*", 304), (#"W/"ETAG""#, 304), (#""other""#, 200),
  ])
  func ifNoneMatchAcceptsListsWildcardsAndWeakTags(header: String, status: Int) async throws {
    let server = try TestHTTPServer()
    let document = server.setDocument("body", at: "/c", etag: "ETAG")
    #expect(document.etag == #""ETAG""#)
    let (_, response) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-None-Match": header])
    #expect(response.statusCode == status)
  }

  @Test func answersIfModifiedSinceWith304UnlessTheDocumentIsNewer() async throws {
    let server = try TestHTTPServer()
    let modified = Date(timeIntervalSince1970: 1_700_000_000)
    server.setDocument("v1", at: "/c", lastModified: modified)
    let url = server.url(for: "/c")

    let (_, plain) = try await HTTPClient.fetch(url)
    #expect(plain.value(forHTTPHeaderField: "Last-Modified") == HTTPDate.string(from: modified))

    let same = try await HTTPClient.fetch(
      url, headers: ["If-Modified-Since": HTTPDate.string(from: modified)])
    #expect(same.response.statusCode == 304)
    let later = try await HTTPClient.fetch(
      url, headers: ["If-Modified-Since": HTTPDate.string(from: modified + 60)])
    #expect(later.response.statusCode == 304)
    let earlier = try await HTTPClient.fetch(
      url, headers: ["If-Modified-Since": HTTPDate.string(from: modified - 60)])
    #expect(earlier.response.statusCode == 200)
    #expect(String(decoding: earlier.body, as: UTF8.self) == "v1")

    // If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
    let both = try await HTTPClient.fetch(
      url,
      headers: [
        "If-Modified-Since": HTTPDate.string(from: modified), "If-None-Match": #""stale""#,
      ])
    #expect(both.response.statusCode == 200)
  }

  @Test func aDocumentWithoutLastModifiedIgnoresIfModifiedSince() async throws {
    let server = try TestHTTPServer()
    server.setDocument("v1", at: "/c")
    let (_, response) = try await HTTPClient.fetch(
      server.url(for: "/c"), headers: ["If-Modified-Since": HTTPDate.string(from: Date())])
    #expect(response.statusCode == 200)
  }

  @Test func unknownPathsAnswer404AndRemovedDocumentsToo() async throws {
    let server = try TestHTTPServer()
    #expect(try await HTTPClient.fetch(server.url(for: "/nothing")).response.statusCode == 404)
    server.setDocument("x", at: "/gone")
    #expect(server.document(at: "/gone")?.text == "x")
    server.removeDocument(at: "/gone")
    #expect(server.document(at: "/gone") == nil)
    #expect(try await HTTPClient.fetch(server.url(for: "/gone")).response.statusCode == 404)
  }

  @Test func headAnswersWithHeadersButNoBody() async throws {
    let server = try TestHTTPServer()
    server.setDocument("twelve bytes", at: "/c")
    let client = try LoopbackClient(port: server.port)
    try client.send("HEAD /c HTTP/1.1\r\nHost: test\r\n\r\nGET /c HTTP/1.1\r\nHost: test\r\n\r\n")
    let head = try await client.readResponseHead()
    #expect(head.status == 200)
    #expect(head.header("Content-Length") == "12")
    // The next bytes are the second response, so the HEAD response carried no body.
    let (next, body) = try await client.readResponse()
    #expect(next.status == 200)
    #expect(String(decoding: body, as: UTF8.self) == "twelve bytes")
  }

  @Test func setJSONDocumentEncodesWithSortedKeys() async throws {
    let server = try TestHTTPServer()
    try server.setJSONDocument(["b": 2, "a": 1], at: "/c")
    let (body, _) = try await HTTPClient.fetch(server.url(for: "/c"))
    #expect(String(decoding: body, as: UTF8.self) == #"{"a":1,"b":2}"#)
  }

  @Test func countsAndRecordsEveryRequest() async throws {
    let server = try TestHTTPServer()
    server.setDocument("a", at: "/a")
    server.setDocument("b", at: "/b")

    _ = try await HTTPClient.fetch(server.url(for: "/a?x=1"), headers: ["X-Trace": "one"])
    _ = try await HTTPClient.fetch(
      server.url(for: "/b"), method: "POST", headers: ["Content-Type": "application/json"],
      body: Data(#"{"k":"v"}"#.utf8))
    _ = try await HTTPClient.fetch(server.url(for: "/a"))

    #expect(server.requestCount == 3)
    #expect(server.requestCount(at: "/a") == 2)
    #expect(server.requestCount(at: "b") == 1)
    let requests = server.requests
    #expect(requests.map(\.method) == ["GET", "POST", "GET"])
    #expect(requests.map(\.path) == ["/a", "/b", "/a"])
    #expect(requests.map(\.query) == ["x=1", nil, nil])
    #expect(requests.map(\.sequenceNumber) == [1, 2, 3])
    #expect(requests[0].header("x-trace") == "one")
    #expect(requests[0].description == "#1 GET /a?x=1 (connection \(requests[0].connectionNumber))")
    #expect(requests[1].text == #"{"k":"v"}"#)
    #expect(requests[0].arrival <= requests[1].arrival)
    #expect(requests[1].arrival <= requests[2].arrival)

    server.clearRecordedRequests()
    #expect(server.requestCount == 0)
    #expect(server.requests(at: "/a").isEmpty)
  }

  @Test func decodesAChunkedRequestBody() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/put") { request in HTTPResponse(body: request.body) }
    let client = try LoopbackClient(port: server.port)
    try client.send(
      "PUT /put HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    let (_, body) = try await client.readResponse()
    #expect(String(decoding: body, as: UTF8.self) == "hello world")
    #expect(server.requests.first?.text == "hello world")
  }

  @Test func answersExpect100ContinueBeforeReadingTheBody() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/post") { request in HTTPResponse(body: request.body) }
    let client = try LoopbackClient(port: server.port)
    try client.send(
      "POST /post HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
    #expect(try await client.readResponseHead().status == 100)
    try client.send("body")
    let (head, body) = try await client.readResponse()
    #expect(head.status == 200)
    #expect(String(decoding: body, as: UTF8.self) == "body")
  }

  @Test func waitForRequestsReturnsOnceTheyArrive() async throws {
    let server = try TestHTTPServer()
    server.setDocument("a", at: "/a")
    let url = server.url(for: "/a")
    let client = Task {
      for _ in 0..<3 { _ = try await HTTPClient.fetch(url) }
    }
    let requests = try await server.waitForRequests(3, at: "/a")
    #expect(requests.count == 3)
    try await client.value

    let error = await #expect(throws: TimeoutError.self) {
      try await server.waitForRequests(4, timeout: .milliseconds(50))
    }
    #expect(error?.description.contains("GET /a") == true)
  }

  @Test func keepsConnectionsAliveAcrossRequests() async throws {
    let server = try TestHTTPServer()
    server.setDocument("one", at: "/1")
    server.setDocument("two", at: "/2")
    let client = try LoopbackClient(port: server.port)

    try client.send("GET /1 HTTP/1.1\r\nHost: test\r\n\r\n")
    let first = try await client.readResponse()
    try client.send("GET /2 HTTP/1.1\r\nHost: test\r\n\r\n")
    let second = try await client.readResponse()

    #expect(first.head.header("Connection") == "keep-alive")
    #expect(String(decoding: first.body, as: UTF8.self) == "one")
    #expect(String(decoding: second.body, as: UTF8.self) == "two")
    #expect(server.connectionCount == 1)
    #expect(Set(server.requests.map(\.connectionNumber)).count == 1)
  }

  @Test func closesTheConnectionWhenTheClientAsks() async throws {
    let server = try TestHTTPServer()
    server.setDocument("one", at: "/1")
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
    let all = try await client.readUntilClosed()
    let text = String(decoding: all, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
    #expect(text.contains("Connection: close\r\n"))
    #expect(text.hasSuffix("\r\n\r\none"))
  }

  @Test func servesManyConnectionsConcurrently() async throws {
    let server = try TestHTTPServer()
    for index in 0..<4 { server.setDocument("doc \(index)", at: "/\(index)") }
    let clients = try (0..<6).map { _ in try LoopbackClient(port: server.port) }
    // Every connection has a request in flight before any response is read.
    for (number, client) in clients.enumerated() {
      try client.send("GET /\(number % 4) HTTP/1.1\r\nHost: test\r\n\r\n")
    }
    for (number, client) in clients.enumerated().reversed() {
      let (_, body) = try await client.readResponse()
      #expect(String(decoding: body, as: UTF8.self) == "doc \(number % 4)")
    }
    try await waitUntil("six open connections") { server.openConnectionCount == 6 }
    #expect(server.connectionCount == 6)

    let urls = (0..<20).map { server.url(for: "/\($0 % 4)") }
    try await withThrowingTaskGroup(of: Int.self) { group in
      for url in urls { group.addTask { try await HTTPClient.fetch(url).response.statusCode } }
      for try await status in group { #expect(status == 200) }
    }
    #expect(server.requestCount == 26)
  }

  @Test func handlersAnswerInsteadOfDocuments() async throws {
    let server = try TestHTTPServer()
    server.setHandler(at: "/echo") { request in
      HTTPResponse(status: 201, headers: ["X-Method": request.method], body: request.body)
    }
    let (body, response) = try await HTTPClient.fetch(
      server.url(for: "/echo"), method: "PUT", body: Data("ping".utf8))
    #expect(response.statusCode == 201)
    #expect(response.value(forHTTPHeaderField: "X-Method") == "PUT")
    #expect(String(decoding: body, as: UTF8.self) == "ping")
    server.removeHandler(at: "/echo")
    #expect(try await HTTPClient.fetch(server.url(for: "/echo")).response.statusCode == 404)
  }

  @Test func stopClosesTheListenerAndOpenConnections() async throws {
    let server = try TestHTTPServer()
    server.setDocument("x", at: "/x")
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /x HTTP/1.1\r\nHost: test\r\n\r\n")
    _ = try await client.readResponse()

    server.stop()
    server.stop()

    #expect(try await client.readUntilClosed().isEmpty)
    #expect(throws: SocketError.self) { try LoopbackClient(port: server.port) }
  }

  @Test func releasingTheServerStopsIt() async throws {
    var server: TestHTTPServer? = try TestHTTPServer()
    let port = try #require(server?.port)
    let client = try LoopbackClient(port: port)
    // Accepted, not still in the listen backlog (closing a listener resets those).
    try await waitUntil("the connection to be accepted") { server?.openConnectionCount == 1 }
    server = nil
    #expect(try await client.readUntilClosed().isEmpty)
    #expect(throws: SocketError.self) { try LoopbackClient(port: port) }
  }

  @Test func answers400ToAMalformedRequest() async throws {
    let server = try TestHTTPServer()
    let client = try LoopbackClient(port: server.port)
    try client.send("NONSENSE\r\n\r\n")
    let text = String(decoding: try await client.readUntilClosed(), as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"))
  }
}
