import Foundation

/// A JSON value exactly as it was delivered: a remote-config entry, or a message of etcd's
/// JSON gateway.
///
/// Public because users name it as `TetherRemoteConfig.JSONValue`, a typealias of this type
/// (documented there); it lives here so that TetherEtcd parses and writes its wire format
/// without linking remote config.
public enum JSONValue: Sendable, Hashable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number without a fraction or exponent that fits in `Int`.
  case int(Int)
  /// Any other number.
  case double(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([String: JSONValue])

  /// Parses a JSON document.
  ///
  /// - Throws: An error saying where the document is broken when `data` is not valid JSON.
  public init(parsing data: Data) throws {
    self = try JSONParser.parse(data)
  }

  /// The value as compact JSON with sorted keys (non-finite numbers are written as `null`).
  public func jsonData() -> Data { JSONWriter.data(self) }

  /// The value as JSON text.
  public var jsonText: String { String(decoding: jsonData(), as: UTF8.self) }

  /// A short name for the kind of value, for error messages: "object", "array", "string"…
  public var kindName: String {
    switch self {
    case .null: "null"
    case .bool: "boolean"
    case .int, .double: "number"
    case .string: "string"
    case .array: "array"
    case .object: "object"
    }
  }
}

extension JSONValue: Codable {
  /// Decodes any JSON value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int.self) {
      self = .int(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value as the JSON it came from.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    case .double(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }
}

extension JSONValue {
  /// Converts a value from `JSONSerialization` or `PropertyListSerialization` (`NSNumber`,
  /// `String`, `Data`, `Date`, arrays and dictionaries) to a `JSONValue`.
  ///
  /// `Data` becomes a base64 string and `Date` an ISO 8601 string, the forms the built-in
  /// `Data` and `Date` config values read. Returns `nil` for anything else.
  public init?(foundationValue value: Any) {
    if let number = value as? NSNumber, type(of: value) != String.self {
      self = JSONValue.number(number, original: value)
      return
    }
    switch value {
    case is NSNull: self = .null
    case let value as String: self = .string(value)
    case let value as Data: self = .string(value.base64EncodedString())
    case let value as Date: self = .string(value.formatted(.iso8601))
    case let value as URL: self = .string(value.absoluteString)
    case let value as [Any]:
      var array: [JSONValue] = []
      array.reserveCapacity(value.count)
      for element in value {
        guard let converted = JSONValue(foundationValue: element) else { return nil }
        array.append(converted)
      }
      self = .array(array)
    case let value as [String: Any]:
      var object: [String: JSONValue] = [:]
      for (key, element) in value {
        guard let converted = JSONValue(foundationValue: element) else { return nil }
        object[key] = converted
      }
      self = .object(object)
    default: return nil
    }
  }

  // `NSNumber` bridges to `Bool`, `Int` and `Double` alike; keep booleans and integers as
  // what they were written as.
  private static func number(_ number: NSNumber, original: Any) -> JSONValue {
    if original is Bool, type(of: original) == Bool.self { return .bool(number.boolValue) }
    #if canImport(Darwin)
    if CFGetTypeID(number) == CFBooleanGetTypeID() { return .bool(number.boolValue) }
    #else
    if type(of: original) != Int.self, type(of: original) != Double.self,
      String(cString: number.objCType) == "c"
    {
      return .bool(number.boolValue)
    }
    #endif
    if type(of: original) == Double.self || type(of: original) == Float.self {
      return .double(number.doubleValue)
    }
    let type = String(cString: number.objCType)
    if type.contains("d") || type.contains("f") { return .double(number.doubleValue) }
    return .int(number.intValue)
  }
}

extension JSONValue: ExpressibleByNilLiteral {
  /// `nil` is JSON `null`: `let value: JSONValue = nil`.
  public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
  /// A boolean literal: `let enabled: JSONValue = true`.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
  /// An integer literal: `let limit: JSONValue = 20`.
  public init(integerLiteral value: Int) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
  /// A floating-point literal: `let ratio: JSONValue = 0.5`.
  public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
  /// A string literal: `let title: JSONValue = "Welcome"`.
  public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
  /// An array literal of JSON values: `let sizes: JSONValue = [1, 2.5, "three", nil]`.
  public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
  /// A dictionary literal with string keys: `let theme: JSONValue = ["dark": true, "size": 14]`.
  ///
  /// A key that appears twice keeps its last value, as in a JSON object.
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
