import Foundation

/// Buffered reads from a `Socket`: lines, exact byte counts, HTTP chunks, everything to the end.
///
/// Used by one thread at a time (a server connection or a `LoopbackClient` call). Every read
/// takes an optional deadline; `nil` blocks until data arrives or the socket is shut down.
final class SocketReader {
  let socket: Socket
  private var buffer: [UInt8] = []
  private var start = 0

  init(socket: Socket) {
    self.socket = socket
  }

  /// Bytes received but not consumed yet.
  var buffered: ArraySlice<UInt8> { buffer[start...] }

  /// Receives more bytes into the buffer; returns `false` at end of stream.
  private func fill(deadline: Deadline?) throws -> Bool {
    if let deadline {
      guard try socket.waitUntilReadable(timeout: deadline.remaining) else {
        throw TimeoutError(waitingFor: "data from the socket", after: deadline.duration)
      }
    }
    let bytes = try socket.receive()
    if bytes.isEmpty { return false }
    if start > 0 && start == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      start = 0
    }
    buffer.append(contentsOf: bytes)
    return true
  }

  /// Reads through the next `\r\n` (or `\n`) and returns the line without it; `nil` at a clean
  /// end of stream.
  func readLine(deadline: Deadline?, limit: Int = 65_536) throws -> String? {
    guard let line = try nextLine(deadline: deadline, limit: limit) else { return nil }
    return String(decoding: buffer[line], as: UTF8.self)
  }

  /// Consumes the next line and returns where its bytes are in `buffer` (without the line
  /// break), valid until the next read; `nil` at a clean end of stream.
  private func nextLine(deadline: Deadline?, limit: Int) throws -> Range<Int>? {
    // Relative to `start`, because `fill` may move the unconsumed bytes to the front.
    var searched = 0
    while true {
      if let newline = buffer[(start + searched)...].firstIndex(of: UInt8(ascii: "\n")) {
        var end = newline
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        defer { start = newline + 1 }
        return start..<end
      }
      searched = buffer.count - start
      if buffer.count - start > limit {
        throw HTTPProtocolError("line longer than \(limit) bytes")
      }
      guard try fill(deadline: deadline) else {
        if start == buffer.count { return nil }
        throw HTTPProtocolError("stream ended in the middle of a line")
      }
    }
  }

  /// Reads exactly `count` bytes.
  func read(count: Int, deadline: Deadline?) throws -> Data {
    while buffer.count - start < count {
      guard try fill(deadline: deadline) else {
        throw HTTPProtocolError(
          "stream ended after \(buffer.count - start) of \(count) expected bytes")
      }
    }
    let data = Data(buffer[start..<start + count])
    start += count
    return data
  }

  /// Reads everything until the peer closes the connection.
  func readToEnd(deadline: Deadline?) throws -> Data {
    while try fill(deadline: deadline) {}
    let data = Data(buffer[start...])
    start = buffer.count
    return data
  }

  /// Reads one chunk of a `Transfer-Encoding: chunked` body; `nil` for the terminating chunk
  /// (whose trailer section is consumed too).
  func readChunk(deadline: Deadline?) throws -> Data? {
    guard let sizeLine = try readLine(deadline: deadline) else {
      throw HTTPProtocolError("stream ended before a chunk")
    }
    let sizeText = sizeLine.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
    guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0
    else {
      throw HTTPProtocolError("bad chunk size line \(sizeLine.debugDescription)")
    }
    if size == 0 {
      while let trailer = try readLine(deadline: deadline), !trailer.isEmpty {}
      return nil
    }
    let chunk = try read(count: size, deadline: deadline)
    guard try readLine(deadline: deadline) == "" else {
      throw HTTPProtocolError("chunk of \(size) bytes not followed by CRLF")
    }
    return chunk
  }

  /// Reads a header block (lines up to the empty line) into name/value pairs.
  ///
  /// By bytes: each name and value is made from its bytes once, without spaces and tabs
  /// around it (HTTP's optional whitespace). Character-by-character `String` work here cost
  /// every benchmark that talks to this server microseconds per request.
  func readHeaderFields(deadline: Deadline?) throws -> [(name: String, value: String)] {
    var fields: [(name: String, value: String)] = []
    var total = 0
    while true {
      guard let line = try nextLine(deadline: deadline, limit: 65_536) else {
        throw HTTPProtocolError("stream ended inside the header section")
      }
      if line.isEmpty { return fields }
      total += line.count
      if total > 256 * 1024 { throw HTTPProtocolError("header section too large") }
      guard let colon = buffer[line].firstIndex(of: UInt8(ascii: ":")) else {
        let text = String(decoding: buffer[line], as: UTF8.self)
        throw HTTPProtocolError("malformed header line \(text.debugDescription)")
      }
      fields.append(
        (
          Self.trimmingBlanks(buffer[line.lowerBound..<colon]),
          Self.trimmingBlanks(buffer[(colon + 1)..<line.upperBound])
        ))
    }
  }

  /// `bytes` as text, without leading and trailing spaces and tabs.
  static func trimmingBlanks(_ bytes: ArraySlice<UInt8>) -> String {
    let isBlank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    guard let first = bytes.firstIndex(where: { !isBlank($0) }),
      let last = bytes.lastIndex(where: { !isBlank($0) })
    else { return "" }
    return String(decoding: bytes[first...last], as: UTF8.self)
  }
}

/// A peer that did not speak HTTP/1.1 the way the reader expected.
struct HTTPProtocolError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
