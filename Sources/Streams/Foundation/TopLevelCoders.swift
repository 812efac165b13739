import Foundation

/// A type that decodes a value from one whole input, such as `JSONDecoder` from `Data`:
/// what ``Publisher/decode(type:decoder:)`` takes.
public protocol TopLevelDecoder {
  /// The type this decoder reads from.
  associatedtype Input

  /// Decodes a value of the given type from `from`.
  func decode<T: Decodable>(_ type: T.Type, from: Input) throws -> T
}

/// A type that encodes a value into one whole output, such as `JSONEncoder` into `Data`:
/// what ``Publisher/encode(encoder:)`` takes.
public protocol TopLevelEncoder {
  /// The type this encoder writes.
  associatedtype Output

  /// Encodes the value.
  func encode<T: Encodable>(_ value: T) throws -> Output
}

extension JSONDecoder: TopLevelDecoder {}
extension JSONEncoder: TopLevelEncoder {}
extension PropertyListDecoder: TopLevelDecoder {}
extension PropertyListEncoder: TopLevelEncoder {}
