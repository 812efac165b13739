import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite struct HTTPFaultTests {
  @Test(arguments: [400, 401, 403, 404, 429, 500, 502, 503, 504])
  func answersAnyStatusCode(status: Int) async throws {
    let server = try TestHTTPServer()
    server.setDocument("fine", at: "/c")
    server.inject(.status(status, body: "failure \(status)"))
    let (body, response) = try await HTTPClient.fetch(server.url(for: "/c"))
    #expect(response.statusCode == status)
    #expect(String(decoding: body, as: UTF8.self) == "failure \(status)")
  }

  @Test func sendsRetryAfterInSecondsOrAsADate() async throws {
    let server = try TestHTTPServer()
    let later = Date(timeIntervalSince1970: 1_800_000_000)
    server.inject(.status(503, retryAfter: .seconds(2)))
    server.inject(.status(429, retryAfter: .date(later)))
    server.inject(.status(429, retryAfter: .raw("soon")))
    let url = server.url(for: "/c")

    let first = try await HTTPClient.fetch(url).response
    #expect(first.statusCode == 503)
    #expect(first.value(forHTTPHeaderField: "Retry-After") == "2")
    let second = try await HTTPClient.fetch(url).response
    #expect(second.statusCode == 429)
    #expect(second.value(forHTTPHeaderField: "Retry-After") == HTTPDate.string(from: later))
    let third = try await HTTPClient.fetch(url).response
    #expect(third.value(forHTTPHeaderField: "Retry-After") == "soon")
  }

  @Test func queuedFaultsApplyToTheNextRequestsThenStop() async throws {
    let server = try TestHTTPServer()
    server.setDocument("fine", at: "/c")
    server.inject(.status(500), count: 2)
    server.inject(.status(503))
    #expect(server.pendingFaultCount == 3)
    let url = server.url(for: "/c")

    var statuses: [Int] = []
    for _ in 0..<4 { statuses.append(try await HTTPClient.fetch(url).response.statusCode) }

    #expect(statuses == [500, 500, 503, 200])
    #expect(server.pendingFaultCount == 0)
  }

  @Test func faultsForAPathLeaveOtherPathsAlone() async throws {
    let server = try TestHTTPServer()
    server.setDocument("a", at: "/a")
    server.setDocument("b", at: "/b")
    server.inject(.status(500), at: "/b")
    #expect(try await HTTPClient.fetch(server.url(for: "/a")).response.statusCode == 200)
    #expect(try await HTTPClient.fetch(server.url(for: "/b")).response.statusCode == 500)
    #expect(try await HTTPClient.fetch(server.url(for: "/b")).response.statusCode == 200)
  }

  @Test func persistentFaultsLastUntilCleared() async throws {
    let server = try TestHTTPServer()
    server.setDocument("fine", at: "/c")
    server.injectPersistently(.status(500))
    server.injectPersistently(.status(503), at: "/c")
    let url = server.url(for: "/c")

    #expect(try await HTTPClient.fetch(url).response.statusCode == 503)
    #expect(try await HTTPClient.fetch(url).response.statusCode == 503)
    #expect(try await HTTPClient.fetch(server.url(for: "/other")).response.statusCode == 500)
    server.inject(.status(429))  // a queued fault goes first
    #expect(try await HTTPClient.fetch(url).response.statusCode == 429)

    server.clearFaults()
    #expect(try await HTTPClient.fetch(url).response.statusCode == 200)
  }

  @Test func delaysTheHeadersThenServes() async throws {
    let server = try TestHTTPServer()
    server.setDocument("slow", at: "/c")
    server.inject(.status(503).delayed(by: .milliseconds(150)))
    server.inject(.delay(.milliseconds(150)))
    let clock = ContinuousClock()
    let url = server.url(for: "/c")

    let start = clock.now
    #expect(try await HTTPClient.fetch(url).response.statusCode == 503)
    let (body, response) = try await HTTPClient.fetch(url)
    let elapsed = clock.now - start

    #expect(response.statusCode == 200)
    #expect(String(decoding: body, as: UTF8.self) == "slow")
    #expect(elapsed >= .milliseconds(300))
  }

  @Test func aDelayedResponseBlocksNeitherOtherConnectionsNorStop() async throws {
    let server = try TestHTTPServer()
    server.setDocument("fast", at: "/fast")
    server.inject(.delay(.seconds(60)), at: "/slow")
    let slow = try LoopbackClient(port: server.port)
    try slow.send("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n")
    try await server.waitForRequests(1, at: "/slow")

    // The slow request cannot finish for a minute; the fast one is served meanwhile.
    let (body, _) = try await HTTPClient.fetch(server.url(for: "/fast"))
    #expect(String(decoding: body, as: UTF8.self) == "fast")

    // stop() waits for no connection thread (it may run on one of Swift concurrency's few
    // threads); it ends the delay, and the slow connection is closed without an answer.
    let clock = ContinuousClock()
    let start = clock.now
    server.stop()
    #expect(clock.now - start < .seconds(5))
    #expect(try await slow.readUntilClosed(timeout: .seconds(10)).isEmpty)
  }

  @Test func truncatesTheBodyAfterAnnouncingItsFullLength() async throws {
    let server = try TestHTTPServer()
    let document = server.setDocument(String(repeating: "a", count: 100), at: "/c")
    server.inject(.truncatedBody(sending: 40))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")

    let head = try await client.readResponseHead()
    #expect(head.header("Content-Length") == String(document.body.count))
    let received = try await client.readUntilClosed()
    #expect(received.count == 40)

    server.inject(.truncatedBody(sending: 10))
    await #expect(throws: (any Error).self) {
      try await HTTPClient.fetch(server.url(for: "/c"))
    }
  }

  @Test func truncatesAGivenBody() async throws {
    let server = try TestHTTPServer()
    server.inject(.truncatedBody(sending: 3, of: Data("0123456789".utf8)))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /any HTTP/1.1\r\nHost: test\r\n\r\n")
    #expect(try await client.readResponseHead().header("Content-Length") == "10")
    #expect(try await client.readUntilClosed() == Data("012".utf8))
  }

  @Test func sendsAnOversizedValidJSONBody() async throws {
    let server = try TestHTTPServer()
    server.inject(.oversizedBody(byteCount: 1_000_000))
    let (body, response) = try await HTTPClient.fetch(server.url(for: "/c"))
    #expect(response.statusCode == 200)
    #expect(response.value(forHTTPHeaderField: "Content-Length") == "1000000")
    #expect(body.count == 1_000_000)
    #expect(try JSONSerialization.jsonObject(with: body) is [String: Any])
  }

  @Test func sendsAnOversizedChunkedBodyWithoutContentLength() async throws {
    let server = try TestHTTPServer()
    server.inject(.oversizedBody(byteCount: 200_000, chunked: true))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")
    let (head, body) = try await client.readResponse()
    #expect(head.header("Content-Length") == nil)
    #expect(head.header("Transfer-Encoding") == "chunked")
    #expect(body.count == 200_000)
  }

  @Test func resetsTheConnection() async throws {
    let server = try TestHTTPServer()
    server.setDocument("fine", at: "/c")
    server.inject(.connectionReset, count: 2)
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")

    let error = await #expect(throws: SocketError.self) { try await client.readUntilClosed() }
    #expect(error?.isConnectionReset == true)
    await #expect(throws: (any Error).self) { try await HTTPClient.fetch(server.url(for: "/c")) }
    #expect(server.requestCount == 2)
  }

  @Test func closesWithoutAResponse() async throws {
    let server = try TestHTTPServer()
    server.inject(.closeWithoutResponse)
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")
    #expect(try await client.readUntilClosed().isEmpty)
  }

  @Test func sendsAMalformedJSONBody() async throws {
    let server = try TestHTTPServer()
    server.setDocument(#"{"ok":true}"#, at: "/c")
    server.inject(.malformedBody())
    let (body, response) = try await HTTPClient.fetch(server.url(for: "/c"))
    #expect(response.statusCode == 200)
    #expect(response.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: body) }
  }

  @Test func sendsRawBytesAsGiven() async throws {
    let server = try TestHTTPServer()
    server.inject(.rawResponse("HTTP/1.1 200 OK\r\nbroken header line\r\n\r\n"))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")
    let received = String(decoding: try await client.readUntilClosed(), as: UTF8.self)
    #expect(received == "HTTP/1.1 200 OK\r\nbroken header line\r\n\r\n")
  }
}
