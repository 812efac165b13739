import Foundation

// libFuzzer harness for the config JSON parser (`JSONParser`) and writer (`JSONWriter`), the
// path every fetched document and every cache read takes. Built by Scripts/run-fuzzers with the
// files listed in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - parsing either succeeds or fails with an offset inside the input;
// - a parsed document holds no non-finite number;
// - writing a parsed document and parsing it again gives the same value: what the cache holds
//   is what was active, so a restart never changes a value (issue #9, item 13).

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let value: JSONValue
  do {
    value = try JSONParser.parse(data)
  } catch {
    precondition(error.offset >= 0 && error.offset <= count, "offset outside the input")
    precondition(!error.description.isEmpty)
    return 0
  }
  precondition(allFinite(value), "a non-finite number was accepted")
  let written = JSONWriter.data(value)
  guard let reparsed = try? JSONParser.parse(written) else {
    preconditionFailure("the writer produced unparsable JSON")
  }
  precondition(reparsed == value, "a round trip through the writer changed the value")
  return 0
}

private func allFinite(_ value: JSONValue) -> Bool {
  switch value {
  case .double(let number): number.isFinite
  case .array(let values): values.allSatisfy(allFinite)
  case .object(let members): members.values.allSatisfy(allFinite)
  default: true
  }
}
