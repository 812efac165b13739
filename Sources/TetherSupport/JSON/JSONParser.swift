import Foundation

/// A small, strict JSON reader and writer for `JSONValue`.
///
/// Config documents are parsed on every changed fetch and at every start from the cache, and
/// etcd responses on every read and watch event, so they get a parser that reads UTF-8 bytes once, keeps integers exact and says where a
/// document is broken.
struct JSONParser {
  struct Failure: Error, CustomStringConvertible {
    let offset: Int
    let message: String
    var description: String { "\(message) at byte \(offset)" }
  }

  private let bytes: [UInt8]
  private var index = 0
  private var depth = 0

  static func parse(_ data: Data) throws(Failure) -> JSONValue {
    var parser = JSONParser(bytes: [UInt8](data))
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    guard parser.index == parser.bytes.count else {
      throw Failure(offset: parser.index, message: "unexpected data after the document")
    }
    return value
  }

  private init(bytes: [UInt8]) { self.bytes = bytes }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  private func fail(_ message: String) -> Failure { Failure(offset: index, message: message) }

  private mutating func parseValue() throws(Failure) -> JSONValue {
    guard index < bytes.count else { throw fail("unexpected end of document") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): try expect("true"); return .bool(true)
    case UInt8(ascii: "f"): try expect("false"); return .bool(false)
    case UInt8(ascii: "n"): try expect("null"); return .null
    default: return try parseNumber()
    }
  }

  private mutating func expect(_ word: StaticString) throws(Failure) {
    let count = word.utf8CodeUnitCount
    guard index + count <= bytes.count else { throw fail("unexpected end of document") }
    let matches = word.withUTF8Buffer { literal in
      literal.indices.allSatisfy { bytes[index + $0] == literal[$0] }
    }
    guard matches else { throw fail("invalid literal") }
    index += count
  }

  /// Enters the object or array whose opening bracket is at `index`; `true` if it is empty
  /// (`closing` follows at once, and has been consumed).
  private mutating func enter(closedBy closing: UInt8) throws(Failure) -> Bool {
    depth += 1
    guard depth <= 512 else { throw fail("nesting too deep") }
    index += 1
    skipWhitespace()
    return leave(at: closing)
  }

  /// Consumes `closing` and leaves the container if it comes next.
  private mutating func leave(at closing: UInt8) -> Bool {
    guard index < bytes.count, bytes[index] == closing else { return false }
    index += 1
    depth -= 1
    return true
  }

  /// After a member: consumes `,` (`false`: another member follows) or `closing` (`true`: the
  /// container has ended).
  private mutating func endsAfterMember(closedBy closing: UInt8) throws(Failure) -> Bool {
    skipWhitespace()
    guard index < bytes.count else { throw fail("unexpected end of document") }
    if leave(at: closing) { return true }
    guard bytes[index] == UInt8(ascii: ",") else {
      throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
    }
    index += 1
    return false
  }

  private mutating func parseObject() throws(Failure) -> JSONValue {
    var object: [String: JSONValue] = [:]
    if try enter(closedBy: UInt8(ascii: "}")) { return .object(object) }
    repeat {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw fail("expected a member name")
      }
      let name = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw fail("expected ':'")
      }
      index += 1
      skipWhitespace()
      object[name] = try parseValue()
    } while try !endsAfterMember(closedBy: UInt8(ascii: "}"))
    return .object(object)
  }

  private mutating func parseArray() throws(Failure) -> JSONValue {
    var array: [JSONValue] = []
    if try enter(closedBy: UInt8(ascii: "]")) { return .array(array) }
    repeat {
      skipWhitespace()
      array.append(try parseValue())
    } while try !endsAfterMember(closedBy: UInt8(ascii: "]"))
    return .array(array)
  }

  private mutating func parseString() throws(Failure) -> String {
    index += 1
    let start = index
    // Fast path: no escapes.
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let text = try validated(bytes[start..<index], at: start)
        index += 1
        return text
      }
      if byte == UInt8(ascii: "\\") { break }
      guard byte >= 0x20 else { throw fail("control character in string") }
      index += 1
    }
    var scalars = [UInt8](bytes[start..<index])
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        return try validated(scalars[...], at: start)
      case UInt8(ascii: "\\"):
        guard index < bytes.count else { throw fail("unexpected end of document") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
        case UInt8(ascii: "b"): scalars.append(0x08)
        case UInt8(ascii: "f"): scalars.append(0x0C)
        case UInt8(ascii: "n"): scalars.append(0x0A)
        case UInt8(ascii: "r"): scalars.append(0x0D)
        case UInt8(ascii: "t"): scalars.append(0x09)
        case UInt8(ascii: "u"):
          var code = try parseHex4()
          if (0xD800..<0xDC00).contains(code) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
              bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("unpaired surrogate") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          } else if (0xDC00..<0xE000).contains(code) {
            throw fail("unpaired surrogate")
          }
          guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
          scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
        default: throw fail("invalid escape")
        }
      default:
        guard byte >= 0x20 else { throw fail("control character in string") }
        scalars.append(byte)
      }
    }
    throw fail("unterminated string")
  }

  /// The string for UTF-8 `bytes`; invalid UTF-8 is an error, never silently repaired (a
  /// repaired string would differ from what the server sent).
  private func validated(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(Failure) -> String {
    if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw Failure(offset: offset, message: "invalid UTF-8 in a string")
    }
    return text
  }

  private mutating func parseHex4() throws(Failure) -> UInt32 {
    guard index + 4 <= bytes.count else { throw fail("unexpected end of document") }
    var code: UInt32 = 0
    for _ in 0..<4 {
      guard let digit = Character(Unicode.Scalar(bytes[index])).hexDigitValue else {
        throw fail("invalid \\u escape")
      }
      code = code << 4 | UInt32(digit)
      index += 1
    }
    return code
  }

  private mutating func parseNumber() throws(Failure) -> JSONValue {
    let start = index
    var isInteger = true
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else {
      throw fail("unexpected character")
    }
    if bytes[index] == 0x30 {
      index += 1
    } else {
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      isInteger = false
      index += 1
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else {
        throw fail("expected a digit")
      }
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      isInteger = false
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else {
        throw fail("expected a digit")
      }
      while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    if isInteger, let value = Int(text) { return .int(value) }
    // A number too large for a Double (1e999) would become infinity here and `null` in the
    // cache, so a restart would change the value: it is rejected instead.
    guard let value = Double(text), value.isFinite else {
      throw Failure(offset: start, message: "number out of range (\(text.prefix(32)))")
    }
    return .double(value)
  }
}

/// Writes `JSONValue`s as compact JSON with sorted keys.
enum JSONWriter {
  static func data(_ value: JSONValue) -> Data {
    var output: [UInt8] = []
    write(value, to: &output)
    return Data(output)
  }

  static func write(_ value: JSONValue, to output: inout [UInt8]) {
    switch value {
    case .null: output.append(contentsOf: "null".utf8)
    case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
    case .int(let value): output.append(contentsOf: String(value).utf8)
    case .double(let value):
      output.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
    case .string(let value): writeString(value, to: &output)
    case .array(let values):
      output.append(UInt8(ascii: "["))
      for (offset, element) in values.enumerated() {
        if offset > 0 { output.append(UInt8(ascii: ",")) }
        write(element, to: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (offset, name) in members.keys.sorted().enumerated() {
        if offset > 0 { output.append(UInt8(ascii: ",")) }
        writeString(name, to: &output)
        output.append(UInt8(ascii: ":"))
        write(members[name]!, to: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  private static func writeString(_ text: String, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
      case 0x0A: output.append(contentsOf: #"\n"#.utf8)
      case 0x0D: output.append(contentsOf: #"\r"#.utf8)
      case 0x09: output.append(contentsOf: #"\t"#.utf8)
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        output.append(contentsOf: #"\u00"#.utf8)
        output.append(hex[Int(byte >> 4)])
        output.append(hex[Int(byte & 15)])
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }
}
