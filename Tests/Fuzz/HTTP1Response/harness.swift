import Foundation

// libFuzzer harness for `HTTP1ResponseParser`, which reads untrusted HTTP/1.1 responses off a
// socket chunk by chunk (the socket transport TetherEtcd uses). Built by Scripts/run-fuzzers
// with the files listed in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - feeding the input whole or split into chunks anywhere gives the same outcome: the same
//   head, the same body bytes, the same end, or a failure either way;
// - the body never holds more bytes than were fed, a Content-Length body never more than it
//   announced, and nothing follows `end`.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  // The first byte picks the request kind, so HEAD answers are explored too.
  let isHead = (bytes.first ?? 0) & 1 == 1
  let whole = outcome(of: bytes, isHead: isHead) { [bytes[...]] }
  let split = outcome(of: bytes, isHead: isHead) {
    var pieces: [ArraySlice<UInt8>] = []
    var index = 0
    var step = 0
    while index < bytes.count {
      let size = 1 + Int(bytes[step % bytes.count]) % 5
      step += 1
      let end = min(bytes.count, index + size)
      pieces.append(bytes[index..<end])
      index = end
    }
    return pieces
  }
  precondition(whole == split, "chunking changed the outcome")
  if case .parsed(_, let body, _, let expected)? = whole {
    precondition(body.count <= bytes.count)
    if let expected { precondition(body.count <= expected) }
  }
  return 0
}

enum Outcome: Equatable {
  case parsed(head: [String], body: Data, ended: Bool, expected: Int?)
  case failed
}

/// Feeds the pieces, then the end of the connection, and sums up what came out.
func outcome(
  of bytes: [UInt8], isHead: Bool, _ pieces: () -> [ArraySlice<UInt8>]
) -> Outcome? {
  var parser = HTTP1ResponseParser(maximumHeadSize: 512, isHeadRequest: isHead)
  var head: [String] = []
  var body = Data()
  var ended = false
  do {
    var events: [HTTP1ResponseParser.Event] = []
    for piece in pieces() { events += try parser.feed(piece) }
    if !parser.isComplete { events += try parser.finish() }
    for event in events {
      precondition(!ended, "an event after the end")
      switch event {
      case .head(let status, let headers):
        precondition(head.isEmpty, "two heads")
        precondition((200...999).contains(status))
        head = ["\(status)"] + headers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
      case .body(let piece):
        precondition(!head.isEmpty, "a body before the head")
        body.append(piece)
      case .end:
        ended = true
      }
    }
    precondition(ended, "parsing stopped without an end or a failure")
  } catch {
    return .failed
  }
  return .parsed(head: head, body: body, ended: ended, expected: parser.expectedLength)
}
