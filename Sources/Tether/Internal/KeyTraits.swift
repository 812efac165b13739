/// How the registry treats a key beyond its type and id.
struct KeyTraits {
  /// The type whose keys share references: a `.Default` key shares with its base key.
  let registryType: ObjectIdentifier
  /// Whether the value lives only in the reference (in-memory), which the scope then keeps.
  let pinned: Bool

  init<K: SharedReaderKey>(_ key: K) {
    if let special = key as? any SpecialKey {
      registryType = special.registryType
      pinned = special.livesInReference
    } else {
      registryType = ObjectIdentifier(K.self)
      pinned = false
    }
  }
}

/// Implemented by Tether's own keys that the registry treats specially.
protocol SpecialKey {
  /// The key type whose references this key shares.
  var registryType: ObjectIdentifier { get }
  /// Whether the value's only home is the reference (in-memory).
  var livesInReference: Bool { get }
}
