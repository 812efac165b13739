import Foundation

// libFuzzer harness for the header parsers the HTTP layer acts on (`HeaderParsing`):
// Retry-After, Cache-Control max-age, ETag, Last-Modified and HTTP dates. Built by
// Scripts/run-fuzzers with the files listed in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - no value traps, and every number is range-checked: Retry-After within 0...one day (so a
//   Duration made from it cannot overflow), max-age within 0...Int32.max;
// - an accepted entity tag is echoed unchanged and is itself accepted again;
// - an accepted Last-Modified parses as an HTTP date.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
  let now = Date(timeIntervalSince1970: 1_780_000_000)
  if let seconds = HeaderParsing.retryAfter(text, now: now) {
    precondition(seconds.isFinite && seconds >= 0 && seconds <= HeaderParsing.maximumDelay)
    _ = Duration.milliseconds(Int64(seconds * 1000))
  }
  if let maxAge = HeaderParsing.maxAge(cacheControl: text) {
    precondition(maxAge >= 0 && maxAge <= Int(Int32.max))
  }
  if let maxAge = HeaderParsing.maxAge(cacheControl: text, shared: true) {
    precondition(maxAge >= 0 && maxAge <= Int(Int32.max))
  }
  if let tag = HeaderParsing.entityTag(text) {
    precondition(HeaderParsing.entityTag(tag) == tag)
  }
  if let lastModified = HeaderParsing.lastModified(text) {
    precondition(HeaderParsing.httpDate(lastModified) != nil)
  }
  if let date = HeaderParsing.httpDate(text) {
    precondition(date.timeIntervalSince1970.isFinite)
  }
  return 0
}
