import Foundation
import TestSupport
import Testing

@Suite struct LoopbackClientTests {
  @Test func connectingToAClosedPortThrows() throws {
    let server = try TestHTTPServer()
    let port = server.port
    server.stop()
    #expect(throws: SocketError.self) { try LoopbackClient(port: port) }
  }

  @Test func readsTimeOutWhenNothingArrives() async throws {
    let server = try TestHTTPServer()
    let client = try LoopbackClient(port: server.port)
    await #expect(throws: TimeoutError.self) {
      try await client.readResponseHead(timeout: .milliseconds(30))
    }
  }

  @Test func readsExactByteCounts() async throws {
    let server = try TestHTTPServer()
    server.setDocument("0123456789", at: "/c")
    let client = try LoopbackClient(port: server.port)
    try client.send("GET /c HTTP/1.1\r\nHost: test\r\n\r\n")
    _ = try await client.readResponseHead()
    #expect(try await client.read(count: 4) == Data("0123".utf8))
    #expect(try await client.read(count: 6) == Data("456789".utf8))
  }
}
