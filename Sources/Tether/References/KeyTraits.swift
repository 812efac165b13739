import Streams
import TetherSupport

/// How the registry treats a key type beyond its type and id.
struct KeyTraits: Sendable {
  /// The type whose keys share references: a `.Default` key shares with its base key.
  let registryType: ObjectIdentifier
  /// Whether the value lives only in the reference (in-memory), which the scope then keeps.
  let pinned: Bool

  /// The traits of `K`, computed once per key type (a dynamic cast costs more than the lookup).
  static func of<K: SharedReaderKey>(_: K.Type) -> KeyTraits {
    let type = ObjectIdentifier(K.self)
    if let known = cache.withLock({ $0[type] }) { return known }
    let traits: KeyTraits
    if let special = K.self as? any SpecialKey.Type {
      traits = KeyTraits(registryType: special.registryType, pinned: special.livesInReference)
    } else {
      traits = KeyTraits(registryType: type, pinned: false)
    }
    cache.withLock { $0[type] = traits }
    return traits
  }

  private static let cache = Lock<[ObjectIdentifier: KeyTraits]>([:])
}

/// Implemented by Tether's own keys that the registry treats specially.
protocol SpecialKey {
  /// The key type whose references this key type shares.
  static var registryType: ObjectIdentifier { get }
  /// Whether the value's only home is the reference (in-memory).
  static var livesInReference: Bool { get }
}
