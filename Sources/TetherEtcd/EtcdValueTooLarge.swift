import Foundation

/// The value stored at an `.etcd` key, or one about to be saved there, holds more bytes than
/// the key accepts (its `maximumValueSize`).
///
/// A stored value over the limit is not decoded: it is the holders' `loadError`, they keep
/// their value, and the key's watch goes on, so a later value within the limit arrives as
/// usual (and clears the error). A save or `update` of a value over the limit is not sent: it
/// is the holders' `saveError`, or what `update` throws.
///
/// Its own type rather than a case of ``EtcdError``, so that a `switch` over `EtcdError`
/// written before the limit existed still compiles:
///
/// ```swift
/// if let tooLarge = $config.loadError as? EtcdValueTooLarge {
///   print("\(tooLarge.key) holds \(tooLarge.size) bytes; the limit is \(tooLarge.limit)")
/// }
/// ```
public struct EtcdValueTooLarge: Error, Equatable, Sendable, CustomStringConvertible,
  LocalizedError
{
  /// The etcd key, as the `.etcd` key names it.
  public var key: String
  /// How many bytes the value holds.
  public var size: Int
  /// The key's `maximumValueSize`.
  public var limit: Int

  /// An error for `key`'s value of `size` bytes against `limit`.
  public init(key: String, size: Int, limit: Int) {
    self.key = key
    self.size = size
    self.limit = limit
  }

  /// A sentence saying which value is too large, and the limit.
  public var description: String {
    "the value of etcd key \(key) holds \(size) bytes, more than its \(limit)-byte limit"
  }

  /// The same sentence as ``description``.
  public var errorDescription: String? { description }
}
