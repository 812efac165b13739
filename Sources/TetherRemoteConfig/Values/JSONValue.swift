import TetherSupport

/// A JSON value exactly as a config source delivered it.
///
/// Config entries keep their raw JSON so that each typed key can decode them its own way:
/// `20` and `"20"` both read as an `Int`, `{"a": 1}` and `"{\"a\": 1}"` both read as a
/// `Decodable` struct.
///
/// The cases are `.null`, `.bool(Bool)`, `.int(Int)` (a number without a fraction or
/// exponent that fits in `Int`), `.double(Double)` (any other number), `.string(String)`,
/// `.array([JSONValue])` and `.object([String: JSONValue])`. A value is:
/// - written as a literal: `let theme: JSONValue = ["dark": true, "size": 14, "accent": nil]`
///   (a dictionary literal's repeated key keeps its last value);
/// - parsed by `JSONValue(parsing: data)`, which throws an error saying at which byte a
///   broken document is broken, keeps integers exact, and rejects a number too large for a
///   `Double`;
/// - written back by `jsonData()` (compact, sorted keys, a non-finite number as `null`) and
///   `jsonText`;
/// - converted from `JSONSerialization` or `PropertyListSerialization` output by
///   `JSONValue(foundationValue:)` (`Data` becomes base64 text, `Date` ISO 8601 text);
/// - `Codable`, `Hashable` and `Sendable`; `kindName` names its kind for error messages
///   ("object", "array", "number"…).
///
/// The type lives in a package-internal module that `.etcd` keys share for their wire format
/// without linking remote config; this name is the one to use.
public typealias JSONValue = TetherSupport.JSONValue
