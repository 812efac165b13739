import Tether

/// A `SharedReaderKey` for one config key: `@SharedReader(.remoteConfig(.welcomeTitle))`.
///
/// It loads `config[key]` and updates every holder whenever an activation (or a change of the
/// defaults) changes the key's value.
public struct RemoteConfigKey<Value: ConfigValueRepresentable>: SharedReaderKey {
  /// Identifies the config instance and the key.
  public struct ID: Hashable, Sendable {
    let config: ObjectIdentifier
    let key: ObjectIdentifier
  }

  /// The config the value is read from.
  public let config: RemoteConfig
  /// The typed key.
  public let key: ConfigKey<Value>

  /// Creates a key for `key` in `config`.
  ///
  /// In an isolated scope (`.isolatedSharedState`, `withSharedStorage(.isolated)`) the key reads
  /// the scope's stand-in for `config` instead: the values the test sets with TetherTesting's
  /// `RemoteConfigTestValues`, never the network.
  public init(_ key: ConfigKey<Value>, in config: RemoteConfig = .shared) {
    self.key = key
    self.config = config.forCurrentScope
  }

  /// The config instance and the key.
  public var id: ID { ID(config: ObjectIdentifier(config), key: ObjectIdentifier(key)) }

  /// Resumes at once with `config[key]`.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    continuation.resume(returning: config[key])
  }

  /// Yields the key's new value after each change of it.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let token = config.observe(key, initial: false) { subscriber.yield($0) }
    return SharedSubscription { token.cancel() }
  }
}

extension SharedReaderKey {
  /// A key for a config value: `@SharedReader(.remoteConfig(.welcomeTitle)) var title`.
  ///
  /// The key carries its default (the config's current value for `key`), so the declaration
  /// needs none; the holder updates whenever an activation changes the key's value.
  ///
  /// - Parameters:
  ///   - key: The typed config key.
  ///   - config: The config to read; ``RemoteConfig/shared`` by default.
  public static func remoteConfig<Value>(
    _ key: ConfigKey<Value>, in config: RemoteConfig = .shared
  ) -> Self where Self == RemoteConfigKey<Value>.Default {
    let readKey = RemoteConfigKey(key, in: config)
    return readKey[default: readKey.config[key]]
  }
}
