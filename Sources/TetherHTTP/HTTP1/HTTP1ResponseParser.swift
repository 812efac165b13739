import Foundation

/// Reads one HTTP/1.1 response fed chunk by chunk, as RFC 9112 frames it: a status line,
/// headers, then a body delimited by `Content-Length`, by chunked transfer coding (trailers
/// read and dropped) or by the end of the connection. Interim `1xx` answers are skipped.
///
/// Everything read from the network is bounded: the head (status line and headers) and the
/// trailers by `maximumHeadSize`, a chunk-size line by 1 KiB. Anything the RFC does not allow —
/// a bare LF inside the head is tolerated, as clients commonly do, but obsolete line folding,
/// a non-numeric status, conflicting lengths, a chunk size that is not hexadecimal — is a
/// ``Failure``, never a guess.
struct HTTP1ResponseParser {
  /// What the response has produced so far, in order: `head` once, `body` pieces, `end` once.
  enum Event: Equatable {
    case head(status: Int, headers: [String: String])
    case body(Data)
    case end
  }

  /// Why the bytes are not an HTTP/1.1 response.
  struct Failure: Error, Equatable {
    let reason: String
  }

  private enum Stage {
    case head
    case fixed(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers
    case untilClose
    case done
  }

  let maximumHeadSize: Int
  /// Whether the request was `HEAD` (its answer has headers only).
  let isHeadRequest: Bool
  private var stage = Stage.head
  private var line: [UInt8] = []
  private var headSize = 0
  private var statusLineSeen = false
  private var status = 0
  private var isHTTP10 = false
  private var headers: [String: String] = [:]
  /// Whether the connection may carry another request once this response has ended.
  private(set) var keepAlive = true
  /// The body's announced length, if `Content-Length` framed it.
  private(set) var expectedLength: Int?
  /// Body bytes delivered so far.
  private(set) var received = 0
  /// Whether bytes followed the end of the response (then `keepAlive` is `false`).
  private(set) var hasTrailingBytes = false

  init(maximumHeadSize: Int = 64 << 10, isHeadRequest: Bool = false) {
    self.maximumHeadSize = max(256, maximumHeadSize)
    self.isHeadRequest = isHeadRequest
    // Room for a usual head at once: growing step by step costs allocations and rehashes.
    line.reserveCapacity(256)
    headers.reserveCapacity(12)
  }

  /// Whether the head has arrived.
  var hasHead: Bool {
    if case .head = stage { return false }
    return true
  }

  /// Whether the whole response has arrived.
  var isComplete: Bool {
    if case .done = stage { return true }
    return false
  }

  /// Feeds bytes; returns the events they completed. Bytes after the end of the response are
  /// ignored and set ``hasTrailingBytes``: the answer is kept, the connection is not reused.
  mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> [Event] {
    var events: [Event] = []
    events.reserveCapacity(3)  // head, body, end: a whole small answer in one allocation
    var index = bytes.startIndex
    while index != bytes.endIndex {
      switch stage {
      case .fixed(let remaining):
        let left = takeBody(bytes, from: &index, upTo: remaining, into: &events)
        if left == 0 {
          stage = .done
          events.append(.end)
        } else {
          stage = .fixed(remaining: left)
        }
      case .chunkData(let remaining):
        let left = takeBody(bytes, from: &index, upTo: remaining, into: &events)
        stage = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
      case .untilClose:
        let piece = Data(bytes[index...])
        index = bytes.endIndex
        received += piece.count
        events.append(.body(piece))
      case .done:
        // A server may not send an unrequested answer: the response stands, but the
        // connection carries nothing more.
        hasTrailingBytes = true
        keepAlive = false
        return events
      case .head, .chunkSize, .chunkDataEnd, .trailers:
        // The rest of the line at once: up to its LF, or all there is when the LF is still
        // to come.
        let lineFeed = bytes[index...].firstIndex(of: 0x0A)
        line.append(contentsOf: bytes[index..<(lineFeed ?? bytes.endIndex)])
        try checkLineLength()
        if !statusLineSeen, case .head = stage { try checkStatusLineStart() }
        guard let lineFeed else { return events }
        index = bytes.index(after: lineFeed)
        if line.last == 0x0D { line.removeLast() }
        // The line is handed over and its buffer taken back afterwards: no copy, no new
        // allocation per line.
        var complete: [UInt8] = []
        swap(&complete, &line)
        defer {
          complete.removeAll(keepingCapacity: true)
          line = complete
        }
        try endLine(complete, events: &events)
      }
    }
    return events
  }

  /// Takes up to `remaining` body bytes from `index` on as one `body` event; returns how many
  /// are still to come.
  private mutating func takeBody<Bytes: Collection<UInt8>>(
    _ bytes: Bytes, from index: inout Bytes.Index, upTo remaining: Int,
    into events: inout [Event]
  ) -> Int {
    let end = bytes.index(index, offsetBy: remaining, limitedBy: bytes.endIndex) ?? bytes.endIndex
    let piece = Data(bytes[index..<end])
    index = end
    received += piece.count
    events.append(.body(piece))
    return remaining - piece.count
  }

  /// The connection ended: completes a body read until the end, or fails when the response
  /// was cut off.
  mutating func finish() throws(Failure) -> [Event] {
    switch stage {
    case .untilClose:
      stage = .done
      return [.end]
    case .done:
      return []
    case .head:
      throw Failure(reason: hasAnyByte ? "the connection ended inside the headers" : "no response")
    default:
      throw Failure(reason: "the connection ended inside the body")
    }
  }

  private var hasAnyByte: Bool { statusLineSeen || !line.isEmpty || headSize > 0 }

  private mutating func checkLineLength() throws(Failure) {
    switch stage {
    case .head, .trailers:
      guard headSize + line.count <= maximumHeadSize else {
        throw Failure(reason: "the headers pass \(maximumHeadSize) bytes")
      }
    case .chunkSize, .chunkDataEnd:
      guard line.count <= 1_024 else { throw Failure(reason: "a chunk-size line passes 1 KiB") }
    default:
      break
    }
  }

  private mutating func endLine(_ line: [UInt8], events: inout [Event]) throws(Failure) {
    switch stage {
    case .head:
      headSize += line.count + 2
      guard headSize <= maximumHeadSize else {
        throw Failure(reason: "the headers pass \(maximumHeadSize) bytes")
      }
      if !statusLineSeen {
        try readStatusLine(line)
      } else if line.isEmpty {
        try endHead(events: &events)
      } else {
        try readHeader(line)
      }
    case .chunkSize:
      let size = try Self.chunkSize(line)
      stage = size == 0 ? .trailers : .chunkData(remaining: size)
    case .chunkDataEnd:
      guard line.isEmpty else { throw Failure(reason: "a chunk is longer than its size") }
      stage = .chunkSize
    case .trailers:
      headSize += line.count + 2
      guard headSize <= maximumHeadSize else {
        throw Failure(reason: "the trailers pass \(maximumHeadSize) bytes")
      }
      if line.isEmpty {
        stage = .done
        events.append(.end)
      }
    default:
      break
    }
  }

  /// The reason given for an answer in HTTP/2: a server that speaks only HTTP/2 answers an
  /// HTTP/1.1 request with its SETTINGS frame (or a GOAWAY), never a status line.
  static let http2Answer =
    "the server answered in HTTP/2, which this client does not speak (it sends HTTP/1.1 only)"

  /// Fails as soon as the bytes of a status line so far cannot begin `HTTP/`, instead of
  /// waiting for a line feed that binary bytes may never hold; an HTTP/2 frame or preface
  /// is named as such.
  private func checkStatusLineStart() throws(Failure) {
    let expected = "HTTP/".utf8
    let count = min(line.count, expected.count)
    guard !line.prefix(count).elementsEqual(expected.prefix(count)) else { return }
    let preface = "PRI * HTTP/2.0".utf8
    if preface.starts(with: line.prefix(preface.count)) {
      // The start of HTTP/2's connection preface: wait for all of it.
      guard line.count >= preface.count else { return }
      throw Failure(reason: Self.http2Answer)
    }
    if line.first == 0 {
      // An HTTP/2 frame begins with its 24-bit length, whose first byte is 0 for any frame
      // a server opens with; its header is 9 bytes.
      guard line.count >= 9 else { return }
      let type = line[line.startIndex + 3]
      let stream = line[(line.startIndex + 5)..<(line.startIndex + 9)].reduce(UInt32(0)) {
        $0 << 8 | UInt32($1)
      }
      // SETTINGS (4) or GOAWAY (7), on stream 0.
      if (type == 4 || type == 7) && stream & 0x7FFF_FFFF == 0 {
        throw Failure(reason: Self.http2Answer)
      }
    }
    throw Failure(reason: "not an HTTP/1.x status line")
  }

  private mutating func readStatusLine(_ line: [UInt8]) throws(Failure) {
    if line.starts(with: "HTTP/2".utf8) {
      throw Failure(reason: Self.http2Answer)
    }
    // HTTP/1.x SP 3DIGIT [SP reason]
    guard line.count >= 12, line.starts(with: "HTTP/1.".utf8),
      line[7] == UInt8(ascii: "0") || line[7] == UInt8(ascii: "1"), line[8] == 0x20,
      line[9...11].allSatisfy({ (0x30...0x39).contains($0) }),
      line.count == 12 || line[12] == 0x20
    else {
      throw Failure(reason: "not an HTTP/1.x status line")
    }
    statusLineSeen = true
    isHTTP10 = line[7] == UInt8(ascii: "0")
    status = line[9...11].reduce(0) { $0 * 10 + Int($1 - 0x30) }
    guard status >= 100 else { throw Failure(reason: "status \(status) is not a status") }
  }

  private mutating func readHeader(_ line: [UInt8]) throws(Failure) {
    guard line.first != 0x20, line.first != 0x09 else {
      throw Failure(reason: "obsolete header line folding")
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
      line[..<colon].allSatisfy(HeaderParsing.isTokenByte)
    else {
      throw Failure(reason: "a header line without a valid name")
    }
    // Token bytes are ASCII (checked above): lowercased byte by byte, without the Unicode
    // rules of `String.lowercased()`.
    let name = String(unsafeUninitializedCapacity: colon) { buffer in
      for (offset, byte) in line[..<colon].enumerated() {
        buffer[offset] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
      }
      return colon
    }
    var value = line[(colon + 1)...]
    while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
    while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
    // RFC 9110 §5.5: a CR, LF or NUL in a field value is invalid; a recipient must reject the
    // message or replace them, and a value that reached the caller with them could split a
    // header it is copied into.
    guard !value.contains(where: { $0 == 0x0D || $0 == 0x00 }) else {
      throw Failure(reason: "a header value with a CR or NUL byte")
    }
    let text = String(decoding: value, as: UTF8.self)
    if let existing = headers[name] {
      headers[name] = existing + ", " + text
    } else {
      headers[name] = text
    }
  }

  /// A list element without the spaces and tabs around it (HTTP's optional whitespace), by
  /// byte work: this runs on every response, where Foundation's trimming would cost
  /// microseconds.
  static func trimmingBlanks(_ text: Substring) -> String {
    let bytes = text.utf8
    let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    guard let first = bytes.firstIndex(where: { !isBlank($0) }),
      let last = bytes.lastIndex(where: { !isBlank($0) })
    else { return "" }
    return String(text[first...last])
  }

  private mutating func endHead(events: inout [Event]) throws(Failure) {
    if (100..<200).contains(status) {
      guard status != 101 else { throw Failure(reason: "the server switched protocols") }
      // An interim answer (100 Continue, 103 Early Hints): the real one follows.
      statusLineSeen = false
      headers = [:]
      headSize = 0
      return
    }
    // Most answers have no `Connection` header: then nothing is split (nor allocated).
    let tokens = (headers["connection"]?.lowercased().split(separator: ",") ?? [])
      .map(Self.trimmingBlanks)
    keepAlive = isHTTP10 ? tokens.contains("keep-alive") : !tokens.contains("close")
    events.append(.head(status: status, headers: headers))
    headSize = 0
    if isHeadRequest || status == 204 || status == 304 {
      stage = .done
      events.append(.end)
      return
    }
    if let encoding = headers["transfer-encoding"] {
      let codings = encoding.lowercased().split(separator: ",").map(Self.trimmingBlanks)
      // Only `chunked` is decoded here, once (RFC 9112 §6.1 forbids applying it twice); any
      // other coding would hand the caller bytes it cannot read as the body.
      guard codings == ["chunked"] else {
        throw Failure(reason: "the transfer coding \"\(encoding)\" is not supported")
      }
      // RFC 9112 §6.1 and §6.3: Transfer-Encoding with Content-Length, or in an HTTP/1.0
      // answer, is faulty framing that may smuggle a response: read it as chunked, then close.
      if headers["content-length"] != nil || isHTTP10 { keepAlive = false }
      stage = .chunkSize
      return
    }
    if let lengthText = headers["content-length"] {
      // The usual answer has one plain number; anything else takes the careful path.
      let length: Int
      if let plain = Self.decimal(lengthText[...]) {
        length = plain
      } else {
        // "5, 5" (a repeated header) is one length; "5, 6" is an attack or a broken proxy.
        let values = Set(lengthText.split(separator: ",").map(Self.trimmingBlanks))
        guard values.count == 1, let only = values.first, let parsed = Self.decimal(only[...])
        else {
          throw Failure(reason: "an invalid Content-Length")
        }
        length = parsed
      }
      expectedLength = length
      if length == 0 {
        stage = .done
        events.append(.end)
      } else {
        stage = .fixed(remaining: length)
      }
      return
    }
    keepAlive = false
    stage = .untilClose
  }

  /// A Content-Length: 1 to 18 ASCII digits (so it fits an `Int`), nothing else.
  private static func decimal(_ text: Substring) -> Int? {
    let bytes = text.utf8
    guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
    var value = 0
    for byte in bytes {
      guard (0x30...0x39).contains(byte) else { return nil }
      value = value * 10 + Int(byte - 0x30)
    }
    return value
  }

  private static func chunkSize(_ line: [UInt8]) throws(Failure) -> Int {
    // chunk-size [; extensions]
    var digits = line[...]
    if let semicolon = digits.firstIndex(of: UInt8(ascii: ";")) { digits = digits[..<semicolon] }
    while let last = digits.last, last == 0x20 || last == 0x09 { digits.removeLast() }
    guard !digits.isEmpty, digits.count <= 15 else {
      throw Failure(reason: "an invalid chunk size")
    }
    var size = 0
    for byte in digits {
      let digit: Int
      switch byte {
      case 0x30...0x39: digit = Int(byte - 0x30)
      case 0x41...0x46: digit = Int(byte - 0x41 + 10)
      case 0x61...0x66: digit = Int(byte - 0x61 + 10)
      default: throw Failure(reason: "an invalid chunk size")
      }
      size = size * 16 + digit
    }
    return size
  }
}
