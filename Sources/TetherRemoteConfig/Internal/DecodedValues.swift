import Streams
import Synchronization
import Tether
import TetherSupport

/// Identifies one decoded view of an entry: its name and the Swift type it was read as.
///
/// Each distinct (name, type) gets a small integer `slot` when a key is declared, so that a
/// lookup indexes an array instead of hashing: that keeps `config[key]` under 100 ns.
@usableFromInline
struct DecodedValueKey: Hashable, Sendable {
  let name: String
  let type: ObjectIdentifier
  @usableFromInline let slot: Int

  private struct Identity: Hashable {
    let name: String
    let type: ObjectIdentifier
  }

  private static let slots = Lock<[Identity: Int]>([:])

  init<Value>(name: String, type: Value.Type) {
    self.name = name
    self.type = ObjectIdentifier(type)
    let identity = Identity(name: name, type: self.type)
    slot = Self.slots.withLock { slots in
      if let slot = slots[identity] { return slot }
      let slot = slots.count
      slots[identity] = slot
      return slot
    }
  }

  @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(slot) }

  @usableFromInline static func == (lhs: DecodedValueKey, rhs: DecodedValueKey) -> Bool {
    lhs.slot == rhs.slot
  }
}

/// The type-erased base of `DecodedValue`, so one dictionary can hold every key's values.
@usableFromInline
class AnyDecodedValue: @unchecked Sendable {
  // Sendable: immutable; subclasses hold only immutable `let`s of Sendable types.
  let name: String

  init(name: String) { self.name = name }
}

/// An entry decoded as `Value` for one activation and one set of defaults: each layer's
/// value when it decoded, and the raw values, so lookups never decode twice.
@usableFromInline
final class DecodedValue<Value: ConfigValueRepresentable>: AnyDecodedValue, @unchecked Sendable {
  // Sendable: immutable after init; `Value` is Sendable.
  @usableFromInline let remote: Value?
  @usableFromInline let remoteRaw: JSONValue?
  @usableFromInline let defaults: Value?
  @usableFromInline let defaultRaw: JSONValue?
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
    super.init(name: name)
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
