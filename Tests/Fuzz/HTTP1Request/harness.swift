import Foundation

// libFuzzer harness for `HTTP1RequestSerializer` and `RequestValidation`: the bytes the engine
// writes for a request. Built by Scripts/run-fuzzers with the files listed in `sources`.
//
// The input is split at 0x00 bytes into a method, a path, then header name/value pairs and a
// body. For every request the validation accepts, the serialized bytes must (a violation
// traps, which libFuzzer reports as a crash):
// - hold exactly one head, ended by the first CRLF CRLF, whose lines are the request line,
//   `Host`, and one line per distinct header name the request carries (framing headers
//   excepted) plus the engine's own (`User-Agent`, `Accept-Encoding`, `Content-Length`);
// - name the target URLComponents would (the engine reads it off the URL's string);
// - carry the method unchanged and every header value unchanged, so no value can smuggle a
//   line, and the body exactly, with a `Content-Length` equal to its size.

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
  let parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
    String(decoding: $0, as: UTF8.self)
  }
  guard parts.count >= 2 else { return 0 }
  var components = URLComponents()
  components.scheme = "http"
  components.host = "example.com"
  components.port = 8080
  components.path = parts[1].hasPrefix("/") ? parts[1] : "/" + parts[1]
  guard let url = components.url else { return 0 }
  // The target read off the URL's string must be the one URLComponents gives, for a URL
  // built from parts and for one parsed from the raw path text (a query, a fragment, odd
  // characters).
  for candidate in [url, URL(string: "http://example.com:8080" + parts[1])].compactMap({ $0 }) {
    let fast = HTTP1RequestSerializer.target(of: candidate)
    let reference = HTTP1RequestSerializer.componentsTarget(of: candidate)
    precondition(fast == reference, "target \(fast) but URLComponents says \(reference)")
  }
  var headers: [String: String] = [:]
  var index = 2
  while index + 1 < parts.count - 1 {
    headers[parts[index]] = parts[index + 1]
    index += 2
  }
  let body = parts.count > 2 ? Data(parts[parts.count - 1].utf8) : nil
  let request = HTTPRequest(
    method: HTTPMethod(rawValue: parts[0]), url: url, headers: headers, body: body)
  do throws(HTTPError) {
    try RequestValidation.validate(request)
  } catch {
    return 0
  }
  let message = HTTP1RequestSerializer.serialize(request)
  let separator: [UInt8] = [13, 10, 13, 10]
  guard let end = firstRange(of: separator, in: message) else {
    preconditionFailure("no end of head")
  }
  let head = String(decoding: message[..<end], as: UTF8.self)
  let sentBody = Array(message[(end + 4)...])
  precondition(sentBody == Array(body ?? Data()), "the body changed")
  let lines = head.components(separatedBy: "\r\n")
  precondition(lines[0].hasPrefix(request.method.rawValue + " /"), "the request line changed")
  precondition(lines[0].hasSuffix(" HTTP/1.1"))
  precondition(lines[1] == "Host: example.com:8080")
  let framing: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]
  var expected = Set(headers.keys.map { $0.lowercased() }).subtracting(framing)
  expected.insert("user-agent")
  expected.insert("accept-encoding")
  var seen: Set<String> = []
  var contentLength: Int?
  for line in lines.dropFirst(2) {
    guard let colon = line.firstIndex(of: ":") else { preconditionFailure("a line without a name") }
    let name = line[..<colon].lowercased()
    precondition(seen.insert(name).inserted, "a header sent twice")
    // By bytes: a value may start with a combining mark, which joins the space before it
    // into one Character.
    let value = String(decoding: line.utf8[colon...].dropFirst(2), as: UTF8.self)
    if name == "content-length" {
      contentLength = Int(value)
      continue
    }
    precondition(expected.contains(name), "a header nobody set: \(name)")
    if let given = headers.first(where: {
      $0.key.lowercased() == name && $0.key == line[..<colon]
    }) {
      precondition(given.value == value, "a value changed")
    }
  }
  precondition(seen.subtracting(["content-length"]) == expected, "a header went missing")
  if let contentLength { precondition(contentLength == sentBody.count) }
  return 0
}

private func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
  guard haystack.count >= needle.count else { return nil }
  for index in 0...(haystack.count - needle.count)
  where haystack[index..<(index + needle.count)].elementsEqual(needle) {
    return index
  }
  return nil
}
