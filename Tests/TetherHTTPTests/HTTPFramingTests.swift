import Foundation
import TestSupport
import Testing
import TetherHTTP

/// Response framing by RFC 9112, against raw answers from a loopback server: conflicting or
/// unusual framing closes the connection, transfer codings other than `chunked` and control
/// characters in header values are typed errors, and stray bytes after a complete answer
/// neither fail it nor reach the next request.
///
/// Each test asks `/odd` (answered with the raw bytes under test) and then `/next` (answered
/// normally); the server numbers its connections, so a reused connection shows.
@Suite struct HTTPFramingTests {
  static let normal = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nnormal"

  /// A server answering `/odd` with `odd` and anything else normally, on kept-alive
  /// connections (it keeps reading after either answer).
  private func server(answeringOddWith odd: Data) throws -> HostileServer {
    try HostileServer { connection in
      while let request = try connection.readRequest() {
        try connection.send(request.target == "/odd" ? odd : Data(Self.normal.utf8))
      }
    }
  }

  private func server(answeringOddWith odd: String) throws -> HostileServer {
    try server(answeringOddWith: Data(odd.utf8))
  }

  private func client(_ server: HostileServer) -> HTTPClient {
    HTTPClient(baseURL: server.baseURL, timeout: .seconds(5), retryPolicy: .none)
  }

  private func get(
    _ client: HTTPClient, _ server: HostileServer, _ path: String
  )
    async throws(HTTPError) -> HTTPResponseMessage
  {
    try await client.response(for: HTTPRequest(url: server.url(for: path)))
  }

  /// Asks `/next` after `/odd` and checks it was answered normally on a new connection.
  private func expectNextOnANewConnection(
    _ client: HTTPClient, _ server: HostileServer, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    let next = try await get(client, server, "/next")
    #expect(next.body == Data("normal".utf8), sourceLocation: sourceLocation)
    let requests = server.requests
    let odd = requests.first { $0.target == "/odd" }
    let following = requests.last { $0.target == "/next" }
    #expect(
      odd != nil && following != nil && odd?.connectionNumber != following?.connectionNumber,
      "the connection of /odd was reused: \(requests)", sourceLocation: sourceLocation)
  }

  // Guards: after `Transfer-Encoding: chunked` plus `Content-Length` the connection was reused
  // (request smuggling territory); the body must be read as chunked.
  @Test func chunkedWithAContentLengthIsReadAsChunkedAndNotReused() async throws {
    let server = try server(
      answeringOddWith:
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n0\r\n\r\n")
    let client = client(server)
    #expect(try await get(client, server, "/odd").body == Data("hello".utf8))
    try await expectNextOnANewConnection(client, server)
  }

  // Guards: a chunked answer on HTTP/1.0 (which has no chunked coding) with `Connection:
  // keep-alive` left the connection in use.
  @Test func chunkedOnHTTP10IsNotReused() async throws {
    let server = try server(
      answeringOddWith:
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n0\r\n\r\n")
    let client = client(server)
    #expect(try await get(client, server, "/odd").body == Data("hello".utf8))
    try await expectNextOnANewConnection(client, server)
  }

  // Guards: `gzip, chunked` returned the raw gzip bytes as the body, and `chunked, chunked`
  // left chunk framing in it; only `chunked` alone is a transfer coding the client reads.
  @Test(arguments: ["gzip, chunked", "chunked, chunked", "chunked on two lines"])
  func transferCodingsOtherThanOneChunkedAreTypedErrors(_ coding: String) async throws {
    let field =
      coding == "chunked on two lines"
      ? "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"
      : "Transfer-Encoding: \(coding)\r\n"
    // For `chunked, chunked` the body is chunk framing around chunk framing.
    let inner = "5\r\nhello\r\n0\r\n\r\n"
    let outer = String(inner.utf8.count, radix: 16) + "\r\n" + inner + "\r\n0\r\n\r\n"
    let server = try server(answeringOddWith: "HTTP/1.1 200 OK\r\n" + field + "\r\n" + outer)
    let client = client(server)
    await #expect(throws: HTTPError.self) { try await get(client, server, "/odd") }
    try await expectNextOnANewConnection(client, server)
  }

  // Guards: a NUL or a bare CR inside a response header value reached the caller.
  @Test(arguments: ["NUL", "CR"])
  func controlCharactersInAHeaderValueAreTypedErrors(_ character: String) async throws {
    let value = character == "NUL" ? "a\u{0}b" : "a\rb"
    let server = try server(
      answeringOddWith: "HTTP/1.1 200 OK\r\nX-Note: \(value)\r\nContent-Length: 2\r\n\r\nok")
    let client = client(server)
    await #expect(throws: HTTPError.self) { try await get(client, server, "/odd") }
    try await expectNextOnANewConnection(client, server)
  }

  // Guards: a valid answer followed by stray bytes in the same write failed as `unreachable`;
  // the answer stands, and the stray bytes (here a whole second answer) must never be taken
  // for the next request's.
  @Test func strayBytesAfterACompleteAnswerKeepItAndDropTheConnection() async throws {
    let server = try server(
      answeringOddWith: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
    let client = client(server)
    #expect(try await get(client, server, "/odd").body == Data("ok".utf8))
    try await expectNextOnANewConnection(client, server)
  }

  // Guards: a server that speaks only HTTP/2 answered an HTTP/1.1 request with its SETTINGS
  // frame and a GOAWAY (or HTTP/2's preface), and the error read "the response ended after 0
  // of ? bytes"; it now says the server answered in HTTP/2.
  @Test(arguments: [
    // An empty SETTINGS frame, then GOAWAY (last stream 0, PROTOCOL_ERROR).
    Data([0, 0, 0, 4, 0, 0, 0, 0, 0] + [0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
    Data("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8),
    Data("HTTP/2 200\r\ncontent-length: 0\r\n\r\n".utf8),
  ])
  func anHTTP2AnswerIsNamedAsSuch(answer: Data) async throws {
    let server = try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      try connection.send(answer)
    }
    defer { server.stop() }
    let error = await #expect(throws: HTTPError.self) {
      try await get(client(server), server, "/a")
    }
    guard case .unreachable(_, let reason) = error else {
      Issue.record("expected unreachable, got \(String(describing: error))")
      return
    }
    #expect(reason.description.contains("answered in HTTP/2"), "\(reason)")
  }

  // Guards: a connection closed before any byte of an answer read "the response ended after 0
  // of ? bytes", as if a body had been cut.
  @Test func aConnectionClosedBeforeAnyAnswerSaysSo() async throws {
    let server = try HostileServer { connection in
      _ = try connection.readRequest()
    }
    defer { server.stop() }
    let error = await #expect(throws: HTTPError.self) {
      try await get(client(server), server, "/a")
    }
    #expect(
      error.map { "\($0)" }?.hasSuffix("the connection closed before a complete answer arrived")
        == true, "\(String(describing: error))")
  }
}
