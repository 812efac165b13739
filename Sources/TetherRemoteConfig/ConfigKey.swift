/// A typed config key: the entry's name and an optional in-code default.
///
/// Declare keys as static members of ``ConfigKeys`` so lookups read `config[.welcomeTitle]`:
///
/// ```swift
/// extension ConfigKeys {
///   static let welcomeTitle = ConfigKey<String>("welcome_title", default: "Welcome")
///   static let maxItems = ConfigKey<Int>("max_items", default: 20)
///   static let banner = ConfigKey<Banner?>("banner")
/// }
/// ```
public final class ConfigKey<Value: ConfigValueRepresentable>: ConfigKeys, @unchecked Sendable {
  // Sendable: every stored property is an immutable `let` of a Sendable type.

  /// The entry's name in the config document.
  public let name: String
  /// The in-code default, used when neither the active config nor the defaults have a
  /// usable value.
  public let defaultValue: Value?
  /// What a lookup returns when nothing at all is configured: the in-code default or the
  /// type's static value.
  @usableFromInline let fallback: Value
  let fallbackSource: ConfigValue.Source
  @usableFromInline let cacheKey: DecodedValueKey

  /// Creates a key with an in-code default.
  public convenience init(_ name: String, default defaultValue: Value) {
    self.init(name: name, defaultValue: defaultValue, fallback: defaultValue, source: .default)
  }

  init(name: String, defaultValue: Value?, fallback: Value, source: ConfigValue.Source) {
    self.name = name
    self.defaultValue = defaultValue
    self.fallback = fallback
    self.fallbackSource = source
    self.cacheKey = DecodedValueKey(name: name, type: Value.self)
    super.init()
  }
}

extension ConfigKey where Value: StaticConfigValueRepresentable {
  /// Creates a key without an in-code default: when nothing is configured, lookups return
  /// the type's static value (`""`, `0`, `false`, empty, `nil`), as Firebase does.
  public convenience init(_ name: String) {
    self.init(
      name: name, defaultValue: nil, fallback: Value.staticConfigValue, source: .static)
  }
}

/// The namespace config keys are declared in, so they can be written `.welcomeTitle`.
///
/// ```swift
/// extension ConfigKeys {
///   static let welcomeTitle = ConfigKey<String>("welcome_title", default: "Welcome")
/// }
/// let title = config[.welcomeTitle]
/// ```
public class ConfigKeys: @unchecked Sendable {
  // Sendable: ConfigKeys has no stored state.
  init() {}
}
