import Foundation

/// One config entry's raw value together with where it came from.
///
/// Typed keys decode from this. Its views follow Firebase Remote Config's `RemoteConfigValue`:
///
/// ```swift
/// let value = config.configValue(forKey: "max_items")
/// value.source       // .remote
/// value.numberValue  // 20, whether the server sent 20 or "20"
/// ```
public struct ConfigValue: Sendable, Hashable {
  /// Where a config value came from.
  public enum Source: String, Sendable, Hashable, Codable {
    /// The active config fetched from the source.
    case remote
    /// A default: from `setDefaults(_:)` and its siblings, or a key's in-code default.
    case `default`
    /// Nothing was configured: the type's static value (`""`, `0`, `false`, empty).
    case `static`
  }

  /// The raw JSON value as the source or the defaults provided it.
  public let raw: JSONValue
  /// Where the value came from.
  public let source: Source
  /// How a flag service evaluated it (variant, reason, metadata), when the source is one
  /// (``OFREPConfigSource``); `nil` otherwise.
  public let evaluation: ConfigEvaluation?

  /// Creates a value.
  public init(raw: JSONValue, source: Source, evaluation: ConfigEvaluation? = nil) {
    self.raw = raw
    self.source = source
    self.evaluation = evaluation
  }

  /// The flag variant the value belongs to, when a flag service evaluated it.
  public var variant: String? { evaluation?.variant }

  /// Why a flag service chose this value (`STATIC`, `TARGETING_MATCH`, …), when it did.
  public var reason: String? { evaluation?.reason }

  /// The value as text: a string as is, a number or boolean as written, `""` for `null`,
  /// and arrays and objects as JSON text.
  public var stringValue: String {
    switch raw {
    case .null: ""
    case .string(let value): value
    case .bool(let value): value ? "true" : "false"
    case .int(let value): String(value)
    case .double(let value): String(value)
    case .array, .object: raw.jsonText
    }
  }

  /// The value as a number: a JSON number, a boolean as 0 or 1, or a string that parses as a
  /// number (`"20"`, `"0.5"`); `nil` otherwise.
  public var numberValue: Double? {
    switch raw {
    case .int(let value): Double(value)
    case .double(let value): value
    case .bool(let value): value ? 1 : 0
    case .string(let text): Double(text.trimmingCharacters(in: .whitespaces))
    default: nil
    }
  }

  /// The value as a boolean, by the truth table of the built-in `Bool` config value:
  /// `1 true t yes y on` and `0 false f no n off` or empty (any case); `nil` otherwise.
  public var boolValue: Bool? { try? Bool(configValue: self) }

  /// The UTF-8 bytes of ``stringValue``, as Firebase's `dataValue` gives them: ready for a
  /// `JSONDecoder` when the value is a JSON document. (A typed `Data` key reads base64.)
  public var dataValue: Data { Data(stringValue.utf8) }

  /// The value as JSON: a string holding a JSON document (as Firebase sends objects) is
  /// parsed; any other string is `nil`; JSON-native values are returned as they are.
  public var jsonValue: JSONValue? {
    guard case .string(let text) = raw else { return raw }
    return try? JSONValue(parsing: Data(text.utf8))
  }
}
