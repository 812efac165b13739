import Foundation

/// A raw TCP client for byte-level checks against a loopback server (usually a
/// `TestHTTPServer`): send exact bytes, read exact bytes back.
///
/// Reads run on a dedicated thread, never on the Swift concurrency pool, and each one has a
/// deadline. Use `URLSession` when a normal HTTP client is the point of the test.
///
/// ```swift
/// let client = try LoopbackClient(port: server.port)
/// try client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
/// let head = try await client.readResponseHead()
/// #expect(head.status == 200)
/// ```
public final class LoopbackClient: Sendable {
  private let socket: Socket
  // Reads are serialised by `readQueue`, the only place `reader` is used.
  private nonisolated(unsafe) let reader: SocketReader
  private let readQueue = DispatchQueue(label: "LoopbackClient.read")

  /// Connects to `127.0.0.1:port`.
  /// - Throws: `SocketError` when nothing listens there.
  public init(port: UInt16) throws {
    socket = try Socket.connectToLoopback(port: port)
    reader = SocketReader(socket: socket)
  }

  deinit {
    socket.close()
  }

  /// Sends `bytes` as they are.
  /// - Throws: `SocketError` when the server has gone away.
  public func send(_ bytes: Data) throws {
    try socket.send(bytes)
  }

  /// Sends the UTF-8 text `text` as it is (write `\r\n` yourself).
  public func send(_ text: String) throws {
    try send(Data(text.utf8))
  }

  /// Closes the connection.
  public func close() {
    socket.shutdown()
  }

  /// Reads a status line and header block.
  ///
  /// - Throws: `TimeoutError`, `SocketError` (`isConnectionReset` for a reset) or a protocol
  ///   error when the bytes are not an HTTP response head.
  public func readResponseHead(
    timeout: Duration = Deadline.defaultTimeout
  ) async throws -> ResponseHead {
    try await onReadQueue(timeout) { reader, deadline in
      guard let statusLine = try reader.readLine(deadline: deadline) else {
        throw SocketError(operation: "recv (connection closed before a response)", code: 0)
      }
      let parts = statusLine.split(separator: " ", maxSplits: 2)
      guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
        throw HTTPProtocolError("bad status line \(statusLine.debugDescription)")
      }
      let fields = try reader.readHeaderFields(deadline: deadline)
      return ResponseHead(status: status, headerFields: fields)
    }
  }

  /// Reads a whole response (head and a `Content-Length` or chunked body), leaving the
  /// connection ready for the next one.
  public func readResponse(
    timeout: Duration = Deadline.defaultTimeout
  ) async throws -> (
    head: ResponseHead, body: Data
  ) {
    let head = try await readResponseHead(timeout: timeout)
    if head.status == 304 || head.status == 204 { return (head, Data()) }
    if head.header("Transfer-Encoding")?.lowercased() == "chunked" {
      var body = Data()
      while let chunk = try await readChunk(timeout: timeout) { body.append(chunk) }
      return (head, body)
    }
    let length = head.header("Content-Length").flatMap { Int($0) } ?? 0
    return (head, try await read(count: length, timeout: timeout))
  }

  /// Reads exactly `count` bytes.
  public func read(count: Int, timeout: Duration = Deadline.defaultTimeout) async throws -> Data {
    try await onReadQueue(timeout) { reader, deadline in
      try reader.read(count: count, deadline: deadline)
    }
  }

  /// Reads one chunk of a chunked body; `nil` for the terminating chunk.
  public func readChunk(timeout: Duration = Deadline.defaultTimeout) async throws -> Data? {
    try await onReadQueue(timeout) { reader, deadline in
      try reader.readChunk(deadline: deadline)
    }
  }

  /// Reads everything until the server closes the connection.
  ///
  /// - Throws: `SocketError` with `isConnectionReset` when the server resets it instead.
  public func readUntilClosed(timeout: Duration = Deadline.defaultTimeout) async throws -> Data {
    try await onReadQueue(timeout) { reader, deadline in
      try reader.readToEnd(deadline: deadline)
    }
  }

  private func onReadQueue<Value: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable (SocketReader, Deadline) throws -> Value
  ) async throws -> Value {
    let deadline = Deadline.after(timeout)
    return try await withCheckedThrowingContinuation { continuation in
      readQueue.async { [self] in
        continuation.resume(with: Result { try body(reader, deadline) })
      }
    }
  }

  /// A response's status and header fields.
  public struct ResponseHead: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields in the order received.
    public let headerFields: [(name: String, value: String)]

    /// The value of header `name` (case-insensitive), repeated fields joined with `, `.
    public func header(_ name: String) -> String? {
      HeaderName.value(of: name, in: headerFields)
    }
  }
}
