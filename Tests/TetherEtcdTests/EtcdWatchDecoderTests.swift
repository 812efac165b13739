import Foundation
import Testing

@testable import TetherEtcd

/// The watch stream's line splitter: a line longer than its limit costs that message, never
/// the stream or unbounded memory.
struct EtcdWatchDecoderTests {
  static func line(revision: Int64, value: String) -> String {
    let value = Data(value.utf8).base64EncodedString()
    return #"{"result":{"header":{"revision":"\#(revision)"},"events":[{"kv":{"key":"L2s=","#
      + #""mod_revision":"\#(revision)","value":"\#(value)"}}]}}"#
  }

  /// Issue 32, item 6: the messages after an over-long one still arrive, whether the long one
  /// came whole or in pieces, and its bytes are not kept.
  @Test func aLineOverTheLimitBecomesAMarkerAndTheStreamGoesOn() throws {
    let limit = 1_000
    let stream = Data(
      (Self.line(revision: 2, value: "small") + "\n"
        + Self.line(revision: 3, value: String(repeating: "x", count: 5_000)) + "\n"
        + Self.line(revision: 4, value: "after") + "\n").utf8)
    var whole = EtcdWatchDecoder(limit: limit)
    let messages = try whole.feed(stream)
    #expect(messages.map(\.revision) == [2, 0, 4])
    #expect(messages.map(\.oversized) == [false, true, false])
    #expect(messages.last?.events.first?.keyValue.value == Data("after".utf8))
    // In pieces of 100 bytes: the same messages.
    var pieces = EtcdWatchDecoder(limit: limit)
    var cut: [EtcdWatchMessage] = []
    var offset = 0
    while offset < stream.count {
      cut += try pieces.feed(stream.subdata(in: offset..<min(stream.count, offset + 100)))
      offset += 100
    }
    #expect(cut == messages)
  }

  /// Before: a line over the limit threw, and the watch failed on it again after every
  /// re-open.
  @Test func anUnfinishedLineOverTheLimitIsReportedOnceAndSkippedToItsEnd() throws {
    var decoder = EtcdWatchDecoder(limit: 200)
    #expect(try decoder.feed(Data(String(repeating: "a", count: 250).utf8)) == [.oversizedMarker])
    #expect(try decoder.feed(Data(String(repeating: "b", count: 250).utf8)).isEmpty)
    let next = try decoder.feed(Data(("tail\n" + Self.line(revision: 7, value: "v") + "\n").utf8))
    #expect(next.map(\.revision) == [7])
  }
}
