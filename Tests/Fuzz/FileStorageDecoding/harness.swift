import Foundation

// libFuzzer harness for file-storage decoding: the path a file's bytes take to a decoded value
// or a typed error (`FileContents.interpret`, the default JSON coders of `.fileStorage`, and the
// error descriptions users see). Built by Scripts/run-fuzzers with the files listed in
// `sources` in the same module.
//
// Properties checked on every input (a violation traps, which libFuzzer reports as a crash):
// - above the cap nothing is decoded; empty is the default; the outcome is one of the four;
// - a value that decoded re-encodes (sorted keys, as saves write it) and decodes to the same
//   value: what a restart reads equals what was saved;
// - every error describes itself with the file's path, without trapping.

/// A settings document of the shape apps keep in files: nesting, optionals, arrays,
/// dictionaries, numbers, dates, data.
struct Settings: Codable, Equatable {
  struct Window: Codable, Equatable {
    var width: Double
    var height: Double
    var title: String?
  }
  var theme: String
  var size: Int
  var ratio: Double?
  var enabled: Bool
  var tags: [String]
  var windows: [Window]
  var counters: [String: Int64]
  var updated: Date?
  var blob: Data?
}

private let url = URL(fileURLWithPath: "/var/lib/app/settings.json")
private let cap = 4_096

/// libFuzzer's entry point: checks one input (`count` bytes at `start`); always returns 0.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  check(data, as: Settings.self)
  check(data, as: [Int].self)
  check(data, as: String.self)
  check(data, as: Double.self)
  check(data, as: [String: Bool].self)
  return 0
}

private func check<Value: Codable & Equatable>(_ data: Data, as type: Value.Type) {
  let decoder = JSONDecoder()
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  let outcome = FileContents.interpret(data, maximumSize: cap) {
    try decoder.decode(Value.self, from: $0)
  }
  switch outcome {
  case .empty:
    precondition(data.isEmpty, "non-empty bytes read as empty")
  case .tooLarge(let size):
    precondition(size == data.count && size > cap, "wrong size cap decision")
    describe(.readFailed(url: url, errno: EFBIG))
  case .value(let value):
    precondition(data.count <= cap)
    let encoded: Data
    do {
      encoded = try encoder.encode(value)
    } catch {
      describe(.encodingFailed(url: url, underlying: error))
      return
    }
    guard let again = try? decoder.decode(Value.self, from: encoded) else {
      preconditionFailure(
        "a saved value does not load again: \(String(decoding: encoded, as: UTF8.self))")
    }
    precondition(again == value || isNaN(value), "a saved value loads as another value")
  case .undecodable(let error):
    let name = FileContents.preservedName(
      of: url.path, stamp: "20260101T000000Z", attempt: data.count % 4)
    describe(.decodingFailed(url: url, preservedAt: URL(fileURLWithPath: name), underlying: error))
    describe(.decodingFailed(url: url, preservedAt: nil, underlying: error))
  }
}

private func isNaN<Value>(_ value: Value) -> Bool {
  (value as? Double)?.isNaN ?? false
}

private func describe(_ error: FileStorageKeyError) {
  let text = error.description
  precondition(text.contains(url.path), "an error that does not name its file: \(text)")
}
