import Foundation

/// Flattens an endpoint's `Encodable` parameters into name/value pairs, in declaration order:
/// scalars become one pair, arrays of scalars one pair per element, `nil` nothing.
enum ParameterEncoder {
  struct Item: Equatable {
    var name: String
    var value: String
  }

  struct Unsupported: Error, CustomStringConvertible {
    let description: String
  }

  static func items(of value: some Encodable) throws -> [Item] {
    let encoder = Encoder(codingPath: [])
    try value.encode(to: encoder)
    return encoder.storage.items
  }

  final class Storage {
    var items: [Item] = []
  }

  private struct Encoder: Swift.Encoder {
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    var storage = Storage()

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
      KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
      Unkeyed(encoder: self, name: codingPath.last?.stringValue)
    }
    func singleValueContainer() -> any SingleValueEncodingContainer {
      Single(encoder: self, name: codingPath.last?.stringValue)
    }

    func add(_ value: String, name: String?) throws {
      guard let name else {
        throw Unsupported(description: "a bare value is not a set of named parameters")
      }
      storage.items.append(Item(name: name, value: value))
    }

    func nested(_ key: any CodingKey) -> Encoder {
      Encoder(codingPath: codingPath + [key], storage: storage)
    }
  }

  private static func text(_ value: some Encodable) -> String? {
    switch value {
    case let value as String: value
    case let value as Bool: value ? "true" : "false"
    case let value as any BinaryInteger: "\(value)"
    case let value as Double: value.isFinite ? "\(value)" : nil
    case let value as Float: value.isFinite ? "\(value)" : nil
    case let value as URL: value.absoluteString
    case let value as UUID: value.uuidString
    default: nil
    }
  }

  private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: Encoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
      guard encoder.codingPath.isEmpty else {
        throw Unsupported(description: "nested value at \(key.stringValue)")
      }
      if let text = ParameterEncoder.text(value) {
        try encoder.add(text, name: key.stringValue)
      } else {
        try value.encode(to: encoder.nested(key))
      }
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
      KeyedEncodingContainer(Keyed<NestedKey>(encoder: encoder.nested(key)))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      Unkeyed(encoder: encoder.nested(key), name: key.stringValue)
    }
    mutating func superEncoder() -> any Swift.Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Swift.Encoder { encoder.nested(key) }
  }

  private struct Unkeyed: UnkeyedEncodingContainer {
    let encoder: Encoder
    let name: String?
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count = 0

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {
      count += 1
      guard let text = ParameterEncoder.text(value) else {
        throw Unsupported(description: "\(name ?? "a value") holds a \(T.self), not a scalar")
      }
      try encoder.add(text, name: name)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
      keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
      KeyedEncodingContainer(Keyed<NestedKey>(encoder: encoder))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Swift.Encoder { encoder }
  }

  private struct Single: SingleValueEncodingContainer {
    let encoder: Encoder
    let name: String?
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {
      if let text = ParameterEncoder.text(value) {
        try encoder.add(text, name: name)
      } else {
        try value.encode(to: encoder)
      }
    }
  }
}

/// Fills `{name}` placeholders of a path template.
enum PathTemplate {
  /// The path with every placeholder replaced by its percent-encoded parameter, and the
  /// parameters no placeholder used, for the query.
  ///
  /// - Throws: ``HTTPError/invalidRequest(_:)`` for a placeholder without a value, with an
  ///   empty one, or with exactly `.` or `..` (a dot-segment: servers resolve it even when
  ///   percent-encoded, so the request would reach another path).
  static func fill(
    _ template: String, with items: [ParameterEncoder.Item],
    parametersType: @autoclosure () -> String
  ) throws(HTTPError) -> (path: String, query: [ParameterEncoder.Item]) {
    // Most templates have no placeholder: one scan of the bytes answers them.
    let braces = (open: UInt8(ascii: "{"), close: UInt8(ascii: "}"))
    if !template.utf8.contains(where: { $0 == braces.open || $0 == braces.close }) {
      return (template, items)
    }
    var remaining = items
    var path = ""
    var rest = Substring(template)
    while let open = rest.utf8.firstIndex(of: braces.open) {
      path += rest[..<open]
      guard let close = rest[open...].utf8.firstIndex(of: braces.close) else {
        throw .invalidRequest("the path \(template) has a \"{\" that is not closed")
      }
      let name = String(rest[rest.index(after: open)..<close])
      guard !name.isEmpty, !name.utf8.contains(braces.open) else {
        throw .invalidRequest("the path \(template) has an empty or nested placeholder")
      }
      guard let index = remaining.firstIndex(where: { $0.name == name }) else {
        throw .invalidRequest(
          "the path \(template) needs a value for {\(name)}, "
            + "but \(parametersType()) has no non-nil parameter \"\(name)\"")
      }
      let value = remaining.remove(at: index).value
      guard !value.isEmpty else {
        throw .invalidRequest("the placeholder {\(name)} of \(template) is empty")
      }
      if remaining.contains(where: { $0.name == name }) {
        throw .invalidRequest("the placeholder {\(name)} of \(template) has several values")
      }
      guard value != "." && value != ".." else {
        // As Retrofit does: `%2E%2E` is no safer than `..`, since servers and proxies decode
        // it and then resolve the dot-segment (`/users/%2E%2E/repos` is `/repos` to them).
        throw .invalidRequest(
          "the placeholder {\(name)} of \(template) is \"\(value)\", a dot-segment that would "
            + "move the request to another path")
      }
      path += escape(value)
      rest = rest[rest.index(after: close)...]
    }
    guard !rest.utf8.contains(braces.close) else {
      throw .invalidRequest("the path \(template) has a \"}\" without a \"{\"")
    }
    path += rest
    return (path, remaining)
  }

  private static let unreserved = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// `text` with everything but unreserved characters percent-encoded (RFC 3986 2.3).
  static func escape(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
  }
}
