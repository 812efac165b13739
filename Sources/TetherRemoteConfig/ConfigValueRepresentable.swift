import Foundation

/// A type a config entry can be read as.
///
/// Tether ships conformances for `String`, `Int`, `Double`, `Float`, `Bool`, `Data` (base64),
/// `URL`, `Date` (ISO 8601), ``HexColor``, arrays and string-keyed dictionaries of these, and
/// `Optional`. Each accepts the JSON-native form (`20`, `true`, an object) and the string form
/// Firebase sends (`"20"`, `"true"`, a JSON document in a string).
///
/// Your own types conform by declaring it; the requirements are provided for `Decodable`
/// types (read from JSON) and `RawRepresentable` types such as string or integer enums:
///
/// ```swift
/// struct Banner: Codable, ConfigValueRepresentable { var title: String; var color: HexColor }
/// enum Theme: String, ConfigValueRepresentable { case light, dark }
/// ```
///
/// A value that exists but cannot be read as the key's type is never taken for a real
/// value: the lookup falls back to the next layer and the ``ConfigDecodingError`` is recorded
/// in ``RemoteConfig/decodeErrors``.
public protocol ConfigValueRepresentable: Sendable {
  /// Reads a value from a config entry.
  ///
  /// - Throws: ``ConfigDecodingError`` when the entry cannot be read as this type.
  init(configValue: ConfigValue) throws

  /// The value as JSON, used when it is set as a default with
  /// ``RemoteConfig/subscript(default:)``; `nil` if the type cannot be written as JSON.
  var configJSON: JSONValue? { get }
}

/// A config value type with a static value for when nothing is configured, as in Firebase:
/// `""`, `0`, `false`, empty data, an empty array or dictionary, `nil`.
///
/// Keys of these types may be declared without an in-code default.
public protocol StaticConfigValueRepresentable: ConfigValueRepresentable {
  /// The value a lookup returns when neither the active config, the defaults nor the key
  /// provide one.
  static var staticConfigValue: Self { get }
}

/// Why a config entry could not be read as a key's type.
public struct ConfigDecodingError: Error, Hashable, CustomStringConvertible {
  /// The entry's name, or `""` when the value was decoded outside of a lookup.
  public var key: String
  /// The name of the type the key reads.
  public var type: String
  /// The layer the bad value came from.
  public var source: ConfigValue.Source
  /// The raw value that could not be read.
  public var value: JSONValue
  /// What was wrong with it.
  public var reason: String

  /// Creates an error for `value` that could not be read as `type`.
  public init<T>(_ type: T.Type, value: ConfigValue, reason: String, key: String = "") {
    self.key = key
    self.type = String(describing: type)
    self.source = value.source
    self.value = value.raw
    self.reason = reason
  }

  /// A sentence naming the key, the type, the value and the reason.
  public var description: String {
    let name = key.isEmpty ? "a config value" : "config key '\(key)'"
    return "\(name) (\(source)) cannot be read as \(type): \(reason); value: \(value.jsonText)"
  }
}

extension ConfigValue {
  /// The text of a string entry, or `nil` for any other kind.
  var text: String? {
    if case .string(let text) = raw { return text }
    return nil
  }

  /// The entry as JSON for a container type: a JSON-native array or object as it is, or a
  /// string holding a JSON document.
  func structuredJSON<T>(for type: T.Type) throws -> JSONValue {
    switch raw {
    case .array, .object: return raw
    case .string(let text):
      do {
        return try JSONValue(parsing: Data(text.utf8))
      } catch {
        throw ConfigDecodingError(type, value: self, reason: "the string is not a JSON document")
      }
    default:
      throw ConfigDecodingError(type, value: self, reason: "expected JSON, found \(raw.kindName)")
    }
  }

  func element(_ raw: JSONValue) -> ConfigValue { ConfigValue(raw: raw, source: source) }
}

// MARK: - Decodable and RawRepresentable types

extension ConfigValueRepresentable {
  /// Types that cannot be written as JSON do not provide a JSON form.
  public var configJSON: JSONValue? { nil }
}

extension ConfigValueRepresentable where Self: Decodable {
  /// Decodes the value from JSON: a JSON-native value, or a string holding a JSON document.
  public init(configValue: ConfigValue) throws {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom { decoder in
      let text = try decoder.singleValueContainer().decode(String.self)
      guard let date = Date(iso8601: text) else {
        throw DecodingError.dataCorrupted(
          .init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date"))
      }
      return date
    }
    if case .string(let text) = configValue.raw, let data = text.data(using: .utf8),
      let value = try? decoder.decode(Self.self, from: data)
    {
      self = value
      return
    }
    do {
      self = try decoder.decode(Self.self, from: configValue.raw.jsonData())
    } catch {
      throw ConfigDecodingError(
        Self.self, value: configValue, reason: "JSON decoding failed: \(error)")
    }
  }
}

extension ConfigValueRepresentable where Self: Encodable {
  /// Encodes the value as JSON.
  public var configJSON: JSONValue? {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .custom { date, encoder in
      var container = encoder.singleValueContainer()
      try container.encode(date.formatted(.iso8601))
    }
    guard let data = try? encoder.encode(self) else { return nil }
    return try? JSONValue(parsing: data)
  }
}

extension ConfigValueRepresentable
where Self: RawRepresentable, RawValue: ConfigValueRepresentable {
  /// Reads the raw value, then the case with that raw value.
  public init(configValue: ConfigValue) throws {
    self = try Self.fromRaw(configValue)
  }

  /// The raw value's JSON.
  public var configJSON: JSONValue? { rawValue.configJSON }

  fileprivate static func fromRaw(_ configValue: ConfigValue) throws -> Self {
    let raw = try RawValue(configValue: configValue)
    guard let value = Self(rawValue: raw) else {
      throw ConfigDecodingError(Self.self, value: configValue, reason: "no case has this raw value")
    }
    return value
  }
}

// A Codable enum with a raw value matches both extensions above; this one is more specific
// and reads the raw value, which is how such enums are written in JSON too.
extension ConfigValueRepresentable
where Self: RawRepresentable & Codable, RawValue: ConfigValueRepresentable {
  /// Reads the raw value, then the case with that raw value.
  public init(configValue: ConfigValue) throws {
    self = try Self.fromRaw(configValue)
  }

  /// The raw value's JSON.
  public var configJSON: JSONValue? { rawValue.configJSON }
}
