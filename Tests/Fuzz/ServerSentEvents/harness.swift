import Foundation

// libFuzzer harness for the server-sent-events parser (`ServerSentEventParser`), which reads
// untrusted `text/event-stream` bodies chunk by chunk. Built by Scripts/run-fuzzers with the
// files listed in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - feeding the input whole or split into chunks anywhere yields the same events (a chunk
//   boundary inside a CRLF or a field changes nothing);
// - no event's data exceeds the limit, and the retry time is range-checked. The limit counts
//   bytes received; bytes that are not UTF-8 decode to U+FFFD, so the check counts scalars
//   (each received byte yields at most one).

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  let limit = 512
  var whole = ServerSentEventParser(limit: limit)
  let wholeEvents = try? whole.feed(bytes)

  var split = ServerSentEventParser(limit: limit)
  var splitEvents: [ServerSentEvent]? = []
  // Chunk sizes taken from the input itself, so the fuzzer explores the boundaries.
  var index = 0
  var step = 0
  while index < bytes.count, splitEvents != nil {
    let size = 1 + Int(bytes[step % bytes.count]) % 7
    step += 1
    let end = min(bytes.count, index + size)
    do {
      splitEvents! += try split.feed(bytes[index..<end])
    } catch {
      splitEvents = nil
    }
    index = end
  }
  if let wholeEvents, let splitEvents {
    precondition(wholeEvents == splitEvents, "chunking changed the events")
    precondition(whole.lastEventID == split.lastEventID)
    precondition(whole.retry == split.retry)
  }
  for event in wholeEvents ?? [] { precondition(event.data.unicodeScalars.count <= limit) }
  if let retry = whole.retry { precondition(retry >= 0 && retry <= 3_600_000) }
  return 0
}
