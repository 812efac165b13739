import Dispatch
import Foundation

/// Serves the requests of one accepted connection on its own thread.
///
/// Only this thread reads, writes and closes the socket (closing under the core's lock, as it
/// leaves the list of open connections); `ServerCore.stop()` may shut it down and signal
/// `waker` from outside, which ends any read, write or wait here promptly.
final class HTTPConnection {
  private let core: ServerCore
  private let socket: Socket
  private let number: Int
  private let waker: DispatchSemaphore
  private let reader: SocketReader
  private var isClosed = false

  init(core: ServerCore, socket: Socket, number: Int, waker: DispatchSemaphore) {
    self.core = core
    self.socket = socket
    self.number = number
    self.waker = waker
    self.reader = SocketReader(socket: socket)
  }

  /// Serves requests until the client or a fault ends the connection, or the server stops.
  func run() {
    while !core.isStopped {
      let draft: RecordedRequestDraft
      do {
        guard let request = try readRequest() else { return }
        draft = request
      } catch is HTTPProtocolError {
        try? write(HTTPResponse(status: 400, body: "malformed request"), keepAlive: false)
        return
      } catch {
        return
      }
      let (request, plan) = core.admit(draft, connection: number)
      if let delay = plan.fault?.delay, !waitWithoutBlockingStop(delay) { return }
      let keepAlive = draft.keepsAlive
      do {
        guard try serve(request, plan: plan, keepAlive: keepAlive), keepAlive else { return }
      } catch {
        return
      }
    }
  }

  func closeSocket() {
    if !isClosed { socket.close() }
    isClosed = true
  }

  // MARK: - Reading

  private func readRequest() throws -> RecordedRequestDraft? {
    var requestLine = ""
    while requestLine.isEmpty {
      guard let line = try reader.readLine(deadline: nil) else { return nil }
      requestLine = line
    }
    let arrival = ContinuousClock.now
    let date = Date()
    // Split by bytes: the request line is ASCII, and Character-wise splitting is costly.
    let parts = requestLine.utf8.split(separator: UInt8(ascii: " ")).map { String(Substring($0)) }
    guard parts.count == 3, parts[2].utf8.starts(with: "HTTP/1.".utf8) else {
      throw HTTPProtocolError("bad request line \(requestLine.debugDescription)")
    }
    let fields = try reader.readHeaderFields(deadline: nil)
    var draft = RecordedRequestDraft(
      method: parts[0], target: parts[1], version: parts[2],
      headerFields: fields, body: Data(), arrival: arrival, date: date)
    if draft.header("Expect")?.lowercased() == "100-continue" {
      try socket.send(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }
    if draft.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
      while let chunk = try reader.readChunk(deadline: nil) { draft.body.append(chunk) }
    } else if let length = draft.header("Content-Length") {
      guard let count = Int(length), count >= 0 else {
        throw HTTPProtocolError("bad Content-Length \(length.debugDescription)")
      }
      draft.body = try reader.read(count: count, deadline: nil)
    }
    return draft
  }

  // MARK: - Answering

  /// Answers one request; returns `false` when the connection must end afterwards.
  private func serve(
    _ request: RecordedRequest, plan: ServerCore.Plan, keepAlive: Bool
  ) throws
    -> Bool
  {
    let isHead = request.method == "HEAD"
    switch plan.fault?.kind ?? .serveDocument {
    case .serveDocument:
      let response =
        plan.handler?(request) ?? Self.documentResponse(plan.document, for: request)
      try write(response, keepAlive: keepAlive, omitBody: isHead)
      return true
    case .response(let response):
      try write(response, keepAlive: keepAlive, omitBody: isHead)
      return true
    case .truncatedBody(let sentByteCount, let body):
      let body = body ?? plan.document?.body ?? Self.jsonFiller(byteCount: 1024)
      let contentType = plan.document?.contentType ?? "application/json"
      try socket.send(
        Self.head(
          status: 200,
          headers: [
            ("Content-Type", contentType), ("Content-Length", String(body.count)),
            ("Connection", "close"),
          ]))
      try socket.send(body.prefix(min(sentByteCount, max(0, body.count - 1))))
      return false
    case .oversizedBody(let byteCount, let chunked):
      try writeOversizedBody(byteCount: byteCount, chunked: chunked, keepAlive: keepAlive)
      return true
    case .stream(let stream):
      return try serveStream(stream, keepAlive: keepAlive)
    case .connectionReset:
      // The close itself comes as the connection ends (see `ServerCore`), now with an RST.
      socket.resetOnClose()
      return false
    case .closeWithoutResponse:
      return false
    case .raw(let bytes):
      try socket.send(bytes)
      return false
    case .gzipBomb(let count):
      let body = GzipBomb.data(decompressedByteCount: count)
      try socket.send(
        Self.head(
          status: 200,
          headers: [
            ("Content-Type", "application/json"), ("Content-Encoding", "gzip"),
            ("Content-Length", String(body.count)), ("Connection", "close"),
          ]))
      var offset = 0
      while offset < body.count, !core.isStopped {
        let piece = body[offset..<min(offset + 65_536, body.count)]
        try socket.send(Data(piece))
        offset += piece.count
      }
      return false
    case .endlessBody(let contentEncoding):
      var fields: [(String, String)] = [
        ("Content-Type", "application/json"), ("Transfer-Encoding", "chunked"),
        ("Connection", "close"),
      ]
      if let contentEncoding { fields.append(("Content-Encoding", contentEncoding)) }
      try socket.send(Self.head(status: 200, headers: fields))
      let chunk = Self.chunk(Data(repeating: UInt8(ascii: " "), count: 65_536))
      while !core.isStopped { try socket.send(chunk) }
      return false
    }
  }

  /// The document's 200, a 304 when the request's validators match it, or a 404.
  static func documentResponse(
    _ document: HTTPDocument?, for request: RecordedRequest
  )
    -> HTTPResponse
  {
    guard let document else {
      return HTTPResponse(
        status: 404, headers: ["Content-Type": "text/plain"],
        body: "no document at \(request.path)")
    }
    var headers = document.headers
    headers["ETag"] = document.etag
    if let lastModified = document.lastModified {
      headers["Last-Modified"] = HTTPDate.string(from: lastModified)
    }
    if request.method == "GET" || request.method == "HEAD" {
      // RFC 9110 13.2.2: If-None-Match takes precedence; If-Modified-Since only without it.
      if let tags = request.header("If-None-Match") {
        if document.matches(ifNoneMatch: tags) {
          return HTTPResponse(status: 304, headers: headers)
        }
      } else if let since = request.header("If-Modified-Since").flatMap(HTTPDate.date(from:)),
        let lastModified = document.lastModified,
        lastModified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
      {
        return HTTPResponse(status: 304, headers: headers)
      }
    }
    headers["Content-Type"] = headers["Content-Type"] ?? document.contentType
    return HTTPResponse(status: 200, headers: headers, body: document.body)
  }

  private func write(_ response: HTTPResponse, keepAlive: Bool, omitBody: Bool = false) throws {
    var fields = Self.merge(
      defaults: [("Content-Type", "application/json")], response.headers)
    if response.status == 304 || response.status == 204 {
      fields.removeAll { $0.0.lowercased() == "content-type" }
    } else {
      fields.append(("Content-Length", String(response.body.count)))
    }
    fields.append(("Connection", keepAlive ? "keep-alive" : "close"))
    var bytes = Self.head(status: response.status, headers: fields)
    if !omitBody && response.status != 304 && response.status != 204 {
      bytes.append(response.body)
    }
    try socket.send(bytes)
  }

  private func writeOversizedBody(byteCount: Int, chunked: Bool, keepAlive: Bool) throws {
    var fields: [(String, String)] = [("Content-Type", "application/json")]
    fields.append(
      chunked ? ("Transfer-Encoding", "chunked") : ("Content-Length", String(byteCount)))
    fields.append(("Connection", keepAlive ? "keep-alive" : "close"))
    try socket.send(Self.head(status: 200, headers: fields))
    let body = Self.jsonFiller(byteCount: byteCount)
    var offset = 0
    while offset < body.count {
      if core.isStopped { throw CancellationError() }
      let piece = body[offset..<min(offset + 65_536, body.count)]
      try socket.send(chunked ? Self.chunk(piece) : Data(piece))
      offset += piece.count
    }
    if chunked { try socket.send(Data("0\r\n\r\n".utf8)) }
  }

  private func serveStream(_ stream: HTTPStream, keepAlive: Bool) throws -> Bool {
    let fields = Self.merge(
      defaults: [
        ("Content-Type", stream.contentType), ("Transfer-Encoding", "chunked"),
        ("Connection", keepAlive ? "keep-alive" : "close"),
      ], stream.headers)
    try socket.send(Self.head(status: stream.status, headers: fields))
    stream.attach(connection: number, waker: waker)
    defer { stream.detach(connection: number) }
    var sent = 0
    while true {
      let (chunks, end) = stream.chunks(from: sent)
      for chunk in chunks { try socket.send(Self.chunk(chunk)) }
      sent += chunks.count
      switch end {
      case .finished:
        try socket.send(Data("0\r\n\r\n".utf8))
        return true
      case .aborted:
        return false
      case .open:
        break
      }
      if core.isStopped || clientHasGone() { return false }
      // Woken by new chunks, the stream's end or stop(); the timeout only bounds how late a
      // client that went away is noticed.
      _ = waker.wait(timeout: .now() + .milliseconds(25))
    }
  }

  /// Waits `delay`, returning `false` if the server stopped meanwhile.
  private func waitWithoutBlockingStop(_ delay: Duration) -> Bool {
    let deadline = Deadline.after(delay)
    while !deadline.hasPassed {
      if core.isStopped { return false }
      _ = waker.wait(timeout: .now() + deadline.remaining.dispatchInterval)
    }
    return !core.isStopped
  }

  private func clientHasGone() -> Bool {
    guard (try? socket.waitUntilReadable(timeout: .zero)) == true else { return false }
    return socket.peerHasClosed()
  }

  // MARK: - Encoding

  static func head(status: Int, headers: [(String, String)]) -> Data {
    var text = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(for: status))\r\n"
    text += "Server: TestHTTPServer\r\n"
    for (name, value) in headers { text += "\(name): \(value)\r\n" }
    text += "\r\n"
    return Data(text.utf8)
  }

  static func chunk(_ bytes: some DataProtocol) -> Data {
    var data = Data(String(bytes.count, radix: 16).utf8)
    data.append(contentsOf: [13, 10])
    data.append(contentsOf: bytes)
    data.append(contentsOf: [13, 10])
    return data
  }

  /// `defaults` with any header also named in `headers` (case-insensitively) replaced by it.
  static func merge(
    defaults: [(String, String)], _ headers: [String: String]
  ) -> [(
    String, String
  )] {
    let names = Set(headers.keys.map { $0.lowercased() })
    var fields = defaults.filter { name, _ in !names.contains(name.lowercased()) }
    fields.append(contentsOf: headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    return fields
  }

  /// A valid JSON document of exactly `byteCount` bytes (at least 16): `{"padding":"xxx…"}`.
  static func jsonFiller(byteCount: Int) -> Data {
    let prefix = Data(#"{"padding":""#.utf8)
    let suffix = Data(#""}"#.utf8)
    var data = prefix
    data.append(Data(repeating: UInt8(ascii: "x"), count: max(0, byteCount - 14)))
    data.append(suffix)
    return data
  }
}
