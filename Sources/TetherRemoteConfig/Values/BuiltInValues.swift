import Foundation

extension String: StaticConfigValueRepresentable {
  /// Reads a string; a number or boolean is read as it is written. `null`, arrays and
  /// objects are not strings.
  public init(configValue: ConfigValue) throws {
    switch configValue.raw {
    case .string(let value): self = value
    case .bool, .int, .double: self = configValue.stringValue
    default:
      throw ConfigDecodingError(
        String.self, value: configValue,
        reason: "expected a string, found \(configValue.raw.kindName)")
    }
  }
  /// The string.
  public var configJSON: JSONValue? { .string(self) }
  /// `""`.
  public static var staticConfigValue: String { "" }
}

extension Int: StaticConfigValueRepresentable {
  /// Reads an integer from a JSON number without a fraction or a string such as `"20"`.
  public init(configValue: ConfigValue) throws {
    switch configValue.raw {
    case .int(let value):
      self = value
      return
    case .double(let value):
      if let exact = Int(exactly: value) {
        self = exact
        return
      }
    case .string(let text):
      let trimmed = text.trimmingCharacters(in: .whitespaces)
      if let value = Int(trimmed) {
        self = value
        return
      }
      if let double = Double(trimmed), let exact = Int(exactly: double) {
        self = exact
        return
      }
    default: break
    }
    throw ConfigDecodingError(Int.self, value: configValue, reason: "not an integer")
  }
  /// The number.
  public var configJSON: JSONValue? { .int(self) }
  /// `0`.
  public static var staticConfigValue: Int { 0 }
}

extension Double: StaticConfigValueRepresentable {
  /// Reads a JSON number or a string such as `"0.5"`.
  public init(configValue: ConfigValue) throws {
    switch configValue.raw {
    case .int(let value): self = Double(value)
    case .double(let value): self = value
    case .string(let text):
      guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else {
        throw ConfigDecodingError(Double.self, value: configValue, reason: "not a number")
      }
      // "1e999", "inf" and "nan" parse, but JSON numbers are finite: a restart must read the
      // same value back from the cache, and the fuzz harness found this one.
      guard value.isFinite else {
        throw ConfigDecodingError(Double.self, value: configValue, reason: "not a finite number")
      }
      self = value
    default:
      throw ConfigDecodingError(
        Double.self, value: configValue,
        reason: "expected a number, found \(configValue.raw.kindName)")
    }
  }
  /// The number.
  public var configJSON: JSONValue? { .double(self) }
  /// `0`.
  public static var staticConfigValue: Double { 0 }
}

extension Float: StaticConfigValueRepresentable {
  /// Reads a JSON number or a string such as `"0.5"`.
  public init(configValue: ConfigValue) throws {
    do {
      self = Float(try Double(configValue: configValue))
    } catch {
      throw ConfigDecodingError(Float.self, value: configValue, reason: "not a number")
    }
  }
  /// The number.
  public var configJSON: JSONValue? { .double(Double(self)) }
  /// `0`.
  public static var staticConfigValue: Float { 0 }
}

extension Bool: StaticConfigValueRepresentable {
  /// Reads a JSON boolean, the numbers `0` and `1`, or a string by this table (any case):
  /// `1 true t yes y on` are true; `0 false f no n off` and the empty string are false.
  /// Anything else is a decoding error.
  public init(configValue: ConfigValue) throws {
    switch configValue.raw {
    case .bool(let value):
      self = value
      return
    case .int(0): self = false; return
    case .int(1): self = true; return
    case .string(let text):
      switch text.trimmingCharacters(in: .whitespaces).lowercased() {
      case "1", "true", "t", "yes", "y", "on": self = true; return
      case "0", "false", "f", "no", "n", "off", "": self = false; return
      default: break
      }
    default: break
    }
    throw ConfigDecodingError(Bool.self, value: configValue, reason: "not a boolean")
  }
  /// The boolean.
  public var configJSON: JSONValue? { .bool(self) }
  /// `false`.
  public static var staticConfigValue: Bool { false }
}

extension Data: StaticConfigValueRepresentable {
  /// Reads a base64 string.
  public init(configValue: ConfigValue) throws {
    guard let text = configValue.text, let data = Data(base64Encoded: text) else {
      throw ConfigDecodingError(Data.self, value: configValue, reason: "not a base64 string")
    }
    self = data
  }
  /// The data as a base64 string.
  public var configJSON: JSONValue? { .string(base64EncodedString()) }
  /// Empty data.
  public static var staticConfigValue: Data { Data() }
}

extension URL: ConfigValueRepresentable {
  /// Reads an absolute URL (one with a scheme) from a string.
  public init(configValue: ConfigValue) throws {
    guard let text = configValue.text, !text.isEmpty, let url = URL(string: text),
      url.scheme != nil
    else {
      throw ConfigDecodingError(URL.self, value: configValue, reason: "not an absolute URL")
    }
    self = url
  }
  /// The URL's absolute string.
  public var configJSON: JSONValue? { .string(absoluteString) }
}

extension Date: ConfigValueRepresentable {
  /// Reads an ISO 8601 date-time string, with or without fractional seconds
  /// (`"2026-03-01T09:30:00Z"`, `"2026-03-01T09:30:00.250+01:00"`).
  public init(configValue: ConfigValue) throws {
    guard let text = configValue.text, let date = Date(iso8601: text) else {
      throw ConfigDecodingError(Date.self, value: configValue, reason: "not an ISO 8601 date")
    }
    self = date
  }
  /// The date as an ISO 8601 string.
  public var configJSON: JSONValue? { .string(formatted(.iso8601)) }

  init?(iso8601 text: String) {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if let date = try? Date(trimmed, strategy: .iso8601) {
      self = date
    } else if let date = try? Date(
      trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    {
      self = date
    } else {
      return nil
    }
  }
}

extension Array: ConfigValueRepresentable where Element: ConfigValueRepresentable {
  /// Reads a JSON array (or a string holding one), reading each element as `Element`.
  public init(configValue: ConfigValue) throws {
    guard case .array(let elements) = try configValue.structuredJSON(for: Self.self) else {
      throw ConfigDecodingError(Self.self, value: configValue, reason: "not an array")
    }
    var result: [Element] = []
    result.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      do {
        result.append(try Element(configValue: configValue.element(element)))
      } catch let error as ConfigDecodingError {
        throw ConfigDecodingError(
          Self.self, value: configValue, reason: "element \(index): \(error.reason)")
      }
    }
    self = result
  }
  /// The elements as a JSON array; `nil` if an element has no JSON form.
  public var configJSON: JSONValue? {
    var result: [JSONValue] = []
    for element in self {
      guard let json = element.configJSON else { return nil }
      result.append(json)
    }
    return .array(result)
  }
}

extension Array: StaticConfigValueRepresentable where Element: ConfigValueRepresentable {
  /// An empty array.
  public static var staticConfigValue: [Element] { [] }
}

extension Dictionary: ConfigValueRepresentable
where Key == String, Value: ConfigValueRepresentable {
  /// Reads a JSON object (or a string holding one), reading each member as `Value`.
  public init(configValue: ConfigValue) throws {
    guard case .object(let members) = try configValue.structuredJSON(for: Self.self) else {
      throw ConfigDecodingError(Self.self, value: configValue, reason: "not an object")
    }
    var result: [String: Value] = [:]
    result.reserveCapacity(members.count)
    for (name, member) in members {
      do {
        result[name] = try Value(configValue: configValue.element(member))
      } catch let error as ConfigDecodingError {
        throw ConfigDecodingError(
          Self.self, value: configValue, reason: "member '\(name)': \(error.reason)")
      }
    }
    self = result
  }
  /// The members as a JSON object; `nil` if a member has no JSON form.
  public var configJSON: JSONValue? {
    var result: [String: JSONValue] = [:]
    for (name, member) in self {
      guard let json = member.configJSON else { return nil }
      result[name] = json
    }
    return .object(result)
  }
}

extension Dictionary: StaticConfigValueRepresentable
where Key == String, Value: ConfigValueRepresentable {
  /// An empty dictionary.
  public static var staticConfigValue: [String: Value] { [:] }
}

extension Optional: ConfigValueRepresentable where Wrapped: ConfigValueRepresentable {
  /// Reads `null` as `nil` and anything else as `Wrapped`.
  public init(configValue: ConfigValue) throws {
    if case .null = configValue.raw {
      self = nil
    } else {
      self = try Wrapped(configValue: configValue)
    }
  }
  /// `null`, or the wrapped value's JSON.
  public var configJSON: JSONValue? {
    guard let self else { return .null }
    return self.configJSON
  }
}

extension Optional: StaticConfigValueRepresentable where Wrapped: ConfigValueRepresentable {
  /// `nil`.
  public static var staticConfigValue: Wrapped? { nil }
}
