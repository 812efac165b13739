import Tether

/// A `SharedReaderKey` for one config key: `@SharedReader(.remoteConfig(.welcomeTitle))`.
///
/// It loads `config[key]` and updates every holder whenever an activation (or a change of the
/// defaults) changes the key's value.
///
/// A holder shows the config's first answer as swift-sharing keys show a load: `isLoading` is
/// `true` while a config with a source has not answered yet (no cache read, nothing activated,
/// no fetch finished), and the holder reads the key's default meanwhile. It turns `false` when
/// the cache is read or an activation lands, or the fetch finds nothing new. When the fetch
/// fails and the config has nothing but its defaults, `loadError` is the
/// ``RemoteConfigError``; the next activation clears it. The key never fetches by itself: call
/// ``RemoteConfig/fetchAndActivate()`` or ``RemoteConfig/startPolling(every:)``. A config with
/// no source (a test's stand-in, ``RemoteConfig/shared`` before `configure`) answers at once.
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

  /// Resumes with `config[key]` once the config has answered: at once when it has (a cache,
  /// an activation, no source), otherwise when its first fetch or activation does. Resumes
  /// throwing the ``RemoteConfigError`` when that fetch failed and the config has nothing but
  /// its defaults.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    config.whenAnswered { [config, key] answer in
      if case .failed(let error) = answer {
        continuation.resume(throwing: error)
      } else {
        continuation.resume(returning: config[key])
      }
    }
  }

  /// Yields the key's new value after each change of it, the failure of a fetch while the
  /// config has nothing but its defaults, and the value again when the config answers after
  /// such a failure (which clears the holder's `loadError`).
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let token = config.observe(key, initial: false) { subscriber.yield($0) }
    let answers = config.answers { [config, key] answer in
      if case .failed(let error) = answer {
        subscriber.yield(throwing: error)
      } else {
        subscriber.yield(config[key])
      }
    }
    return SharedSubscription {
      token.cancel()
      answers.cancel()
    }
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
