/// Identifies one decoded view of an entry: its name and the Swift type it was read as.
///
/// The hash is computed once, when the key is declared, so that a lookup hashes one `Int`
/// instead of the name's characters.
struct DecodedValueKey: Hashable, Sendable {
  let name: String
  let type: ObjectIdentifier
  private let precomputedHash: Int

  init<Value>(name: String, type: Value.Type) {
    self.name = name
    self.type = ObjectIdentifier(type)
    var hasher = Hasher()
    hasher.combine(name)
    hasher.combine(self.type)
    precomputedHash = hasher.finalize()
  }

  func hash(into hasher: inout Hasher) { hasher.combine(precomputedHash) }

  static func == (lhs: DecodedValueKey, rhs: DecodedValueKey) -> Bool {
    lhs.precomputedHash == rhs.precomputedHash && lhs.type == rhs.type && lhs.name == rhs.name
  }
}

/// The type-erased base of `DecodedValue`, so one dictionary can hold every key's values.
class AnyDecodedValue: @unchecked Sendable {
  // Sendable: subclasses hold only immutable `let`s of Sendable types.
}

/// An entry decoded as `Value` for one activation and one set of defaults: each layer's
/// value when it decoded, and the raw values, so lookups never decode twice.
final class DecodedValue<Value: ConfigValueRepresentable>: AnyDecodedValue, @unchecked Sendable {
  // Sendable: immutable after init; `Value` is Sendable.
  let remote: Value?
  let remoteRaw: JSONValue?
  let defaults: Value?
  let defaultRaw: JSONValue?
  let errors: [ConfigDecodingError]

  init(name: String, remoteRaw: JSONValue?, defaultRaw: JSONValue?) {
    var errors: [ConfigDecodingError] = []
    func decode(_ raw: JSONValue?, _ source: ConfigValue.Source) -> Value? {
      guard let raw else { return nil }
      let value = ConfigValue(raw: raw, source: source)
      do {
        return try Value(configValue: value)
      } catch var error as ConfigDecodingError {
        error.key = name
        errors.append(error)
      } catch {
        errors.append(ConfigDecodingError(Value.self, value: value, reason: "\(error)", key: name))
      }
      return nil
    }
    self.remote = decode(remoteRaw, .remote)
    self.remoteRaw = remoteRaw
    self.defaults = decode(defaultRaw, .default)
    self.defaultRaw = defaultRaw
    self.errors = errors
  }

  /// The value a plain lookup returns and the layer it came from.
  func resolve(_ key: ConfigKey<Value>) -> (value: Value, origin: ConfigValue) {
    if let remote, let remoteRaw { return (remote, ConfigValue(raw: remoteRaw, source: .remote)) }
    if let defaults, let defaultRaw {
      return (defaults, ConfigValue(raw: defaultRaw, source: .default))
    }
    return (
      key.fallback,
      ConfigValue(raw: key.fallback.configJSON ?? .null, source: key.fallbackSource)
    )
  }
}
