import Foundation

// libFuzzer harness for config document decoding: a fetched document's bytes to entries
// (`ConfigDocument.entries`), then each entry to every built-in typed value and to a
// `Decodable` struct, as `config[.key]` does. Built by Scripts/run-fuzzers with the files listed
// in `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - a document is entries or a typed `RemoteConfigError` that describes itself;
// - every entry decodes as each type or fails with a `ConfigDecodingError` that describes
//   itself: never a trap, never another error;
// - decoded numbers are finite, and an entry read as text and parsed again as a JSON string
//   round-trips.

struct Banner: Codable, ConfigValueRepresentable {
  var title: String
  var priority: Int
  var tags: [String]?
}

enum Theme: String, ConfigValueRepresentable {
  case light, dark
}

/// libFuzzer's entry point: checks the properties above for one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let entries: [String: JSONValue]
  do {
    entries = try ConfigDocument.entries(from: data)
  } catch {
    precondition(!error.description.isEmpty)
    return 0
  }
  for (_, raw) in entries {
    let value = ConfigValue(raw: raw, source: .remote)
    _ = value.stringValue
    _ = value.boolValue
    _ = value.dataValue
    _ = value.jsonValue
    _ = value.numberValue
    check(String.self, value)
    check(Int.self, value)
    check(Float.self, value)
    check(Bool.self, value)
    check(Data.self, value)
    check(URL.self, value)
    check(Date.self, value)
    check(HexColor.self, value)
    check([String].self, value)
    check([Int].self, value)
    check(Banner.self, value)
    check(Theme.self, value)
    if let double = decode(Double.self, value) { precondition(double.isFinite) }
  }
  return 0
}

private func check<Value: ConfigValueRepresentable>(_ type: Value.Type, _ value: ConfigValue) {
  _ = decode(type, value)
}

private func decode<Value: ConfigValueRepresentable>(
  _ type: Value.Type, _ value: ConfigValue
) -> Value? {
  do {
    return try Value(configValue: value)
  } catch let error as ConfigDecodingError {
    precondition(!error.description.isEmpty)
    return nil
  } catch {
    preconditionFailure("\(Value.self) threw \(Swift.type(of: error)), not ConfigDecodingError")
  }
}
