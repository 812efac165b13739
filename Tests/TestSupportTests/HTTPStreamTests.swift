import Foundation
import TestSupport
import Testing

@Suite struct HTTPStreamTests {
  @Test func streamsChunksAsTheTestSendsThemAndEndsProperly() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream(headers: ["X-Watch": "1"])
    stream.send("before\n")  // sent before any client: replayed to each client
    server.inject(.stream(stream), at: "/watch")
    server.setDocument("after", at: "/after")
    let client = try LoopbackClient(port: server.port)
    try client.send("POST /watch HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\n{}")

    let head = try await client.readResponseHead()
    #expect(head.status == 200)
    #expect(head.header("Transfer-Encoding") == "chunked")
    #expect(head.header("Content-Length") == nil)
    #expect(head.header("X-Watch") == "1")
    #expect(try await client.readChunk() == Data("before\n".utf8))
    try await stream.waitForClients(1)
    #expect(stream.clientCount == 1)

    stream.send(#"{"event":1}"#)
    #expect(try await client.readChunk() == Data(#"{"event":1}"#.utf8))
    stream.send(Data())  // ignored: an empty chunk would end the body
    stream.send(#"{"event":2}"#)
    #expect(try await client.readChunk() == Data(#"{"event":2}"#.utf8))

    stream.finish()
    #expect(try await client.readChunk() == nil)
    stream.send("ignored after finish")

    // The body ended properly, so the connection carries the next request.
    try client.send("GET /after HTTP/1.1\r\nHost: test\r\n\r\n")
    let (_, body) = try await client.readResponse()
    #expect(String(decoding: body, as: UTF8.self) == "after")
    try await stream.waitForNoClients()
    #expect(stream.totalClientCount == 1)
    #expect(server.requests(at: "/watch").first?.text == "{}")
  }

  @Test func abortClosesTheConnectionWithoutTheLastChunk() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream()
    server.inject(.stream(stream))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /watch HTTP/1.1\r\nHost: test\r\n\r\n")
    _ = try await client.readResponseHead()
    stream.send("partial")
    #expect(try await client.readChunk() == Data("partial".utf8))

    stream.abort()

    #expect(try await client.readUntilClosed().isEmpty)
  }

  @Test func noticesWhenTheClientGoesAway() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream()
    server.injectPersistently(.stream(stream))
    let first = try LoopbackClient(port: server.port)
    let second = try LoopbackClient(port: server.port)
    for client in [first, second] {
      try client.send("GET /watch HTTP/1.1\r\nHost: test\r\n\r\n")
      _ = try await client.readResponseHead()
    }
    try await stream.waitForClients(2)

    first.close()
    try await waitUntil("one client left") { stream.clientCount == 1 }

    stream.send("to the one left")
    #expect(try await second.readChunk() == Data("to the one left".utf8))
    #expect(stream.totalClientCount == 2)
  }

  @Test func stopEndsAnOpenStream() async throws {
    let server = try TestHTTPServer()
    let stream = HTTPStream()
    server.inject(.stream(stream))
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /watch HTTP/1.1\r\nHost: test\r\n\r\n")
    _ = try await client.readResponseHead()
    try await stream.waitForClients(1)

    server.stop()

    #expect(try await client.readUntilClosed().isEmpty)
    // stop() does not wait for the connection's thread (it may run on a thread of Swift
    // concurrency): the stream forgets the client when that thread ends, soon after.
    try await waitUntil("the stream forgot the client") { stream.clientCount == 0 }
  }

  @Test func waitForClientsTimesOut() async throws {
    let stream = HTTPStream()
    await #expect(throws: TimeoutError.self) {
      try await stream.waitForClients(1, timeout: .milliseconds(30))
    }
  }
}
