import Foundation

/// One server-sent event of a `text/event-stream` response (see
/// ``HTTPClient/serverSentEvents(for:)``).
public struct ServerSentEvent: Hashable, Sendable {
  /// The event type (`event:`), `message` when the server named none.
  public var event: String
  /// The event's data: its `data:` lines joined with line feeds.
  public var data: String
  /// The last event ID the server set (`id:`), if any.
  public var id: String?

  /// Creates an event.
  public init(event: String = "message", data: String = "", id: String? = nil) {
    self.event = event
    self.data = data
    self.id = id
  }
}

/// Parses a `text/event-stream` body fed chunk by chunk, as the HTML standard describes:
/// lines end with CR, LF or CRLF (also split across chunks); `data:` lines accumulate; a blank
/// line dispatches; `:` lines are comments; `retry:` is a reconnection time in milliseconds.
///
/// An event (or a line) longer than `limit` bytes is an error, never an unbounded buffer. The
/// limit counts bytes as received: bytes that are not UTF-8 become U+FFFD in the event's text.
struct ServerSentEventParser {
  struct TooLarge: Error {}

  let limit: Int
  private var line: [UInt8] = []
  private var lastWasCR = false
  private var data: [UInt8] = []
  private var hasData = false
  private var event = ""
  private var pendingID: String?
  private var isFirstLine = true
  /// The last event ID seen, for `Last-Event-ID` on reconnection.
  private(set) var lastEventID: String?
  /// The reconnection time the server asked for, in milliseconds (range-checked: 0 to one hour).
  private(set) var retry: Int?

  init(limit: Int) {
    self.limit = max(1, limit)
  }

  /// Feeds `chunk`; returns the events it completed, in order.
  mutating func feed(_ chunk: some Sequence<UInt8>) throws(TooLarge) -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for byte in chunk {
      if lastWasCR {
        lastWasCR = false
        if byte == 0x0A { continue }
      }
      if byte == 0x0D || byte == 0x0A {
        lastWasCR = byte == 0x0D
        if let event = try endLine() { events.append(event) }
      } else {
        line.append(byte)
        guard line.count + data.count <= limit else { throw TooLarge() }
      }
    }
    return events
  }

  private mutating func endLine() throws(TooLarge) -> ServerSentEvent? {
    defer { line.removeAll(keepingCapacity: true) }
    if isFirstLine {
      isFirstLine = false
      if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
    }
    if line.isEmpty { return dispatch() }
    if line.first == UInt8(ascii: ":") { return nil }
    let name: [UInt8]
    var value: ArraySlice<UInt8>
    if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
      name = Array(line[..<colon])
      value = line[(colon + 1)...]
      if value.first == 0x20 { value = value.dropFirst() }
    } else {
      name = line
      value = []
    }
    switch String(decoding: name, as: UTF8.self) {
    case "data":
      if hasData { data.append(0x0A) }
      data.append(contentsOf: value)
      hasData = true
      guard data.count <= limit else { throw TooLarge() }
    case "event":
      event = String(decoding: value, as: UTF8.self)
    case "id":
      if !value.contains(0) { pendingID = String(decoding: value, as: UTF8.self) }
    case "retry":
      if !value.isEmpty, value.count <= 10, value.allSatisfy({ (0x30...0x39).contains($0) }),
        let milliseconds = Int(String(decoding: value, as: UTF8.self))
      {
        retry = min(milliseconds, 3_600_000)
      }
    default:
      break
    }
    return nil
  }

  private mutating func dispatch() -> ServerSentEvent? {
    if let pendingID { lastEventID = pendingID.isEmpty ? nil : pendingID }
    defer {
      data.removeAll(keepingCapacity: true)
      hasData = false
      event = ""
      pendingID = nil
    }
    guard hasData else { return nil }
    return ServerSentEvent(
      event: event.isEmpty ? "message" : event, data: String(decoding: data, as: UTF8.self),
      id: lastEventID)
  }
}
