import Foundation
import Tether
import TetherRemoteConfig

/// The values `.remoteConfig` keys read in an isolated scope: the test sets them, and no
/// source is ever fetched.
///
/// Under `.isolatedSharedState` (or `withSharedStorage(.isolated)`), a key declared as
/// `.remoteConfig(.newCheckout)` — on `RemoteConfig.shared`, or any config not created in the
/// test — reads the scope's stand-in for that config. The stand-in starts with the real
/// config's defaults and no fetched values; what the test sets becomes active at once, and
/// holders update as they would after an activation:
///
/// ```swift
/// @Test(.isolatedSharedState) func theNewCheckoutShowsWhenItsFlagIsOn() {
///   let flags = RemoteConfigTestValues.standingIn(for: .shared)
///   @SharedReader(.remoteConfig(.newCheckout)) var newCheckout
///   #expect(newCheckout == false)          // the key's default
///   flags.set(.newCheckout, to: true)
///   #expect(newCheckout == true)
/// }
/// ```
///
/// Values belong to the scope: every test starts without any. Code that reads a config
/// directly (`config[.key]`) should be handed ``config``. A config the test creates itself
/// (say, on a stub source) is no stand-in's business: its keys read it, and its own
/// `fetchAndActivate()` is what they see (``standingIn(for:)`` then sets values on it
/// directly). To test against another real config (its source, its cache), call
/// ``useRealConfig(_:)`` before creating the keys.
public struct RemoteConfigTestValues: Sendable {
  /// The stand-in `.remoteConfig` keys read in this scope; hand it to code that reads a config
  /// directly.
  public let config: RemoteConfig

  /// The test values standing in for `config` in the current isolated scope (for a config
  /// created in the scope, its own values).
  ///
  /// - Precondition: The current scope is isolated (`.isolatedSharedState` or
  ///   `withSharedStorage(.isolated)`); outside one, keys read their real config.
  public static func standingIn(for config: RemoteConfig = .shared) -> RemoteConfigTestValues {
    guard SharedStorage.current.isIsolated else {
      preconditionFailure(
        "RemoteConfigTestValues.standingIn(for:) needs an isolated scope: use it in a test "
          + "marked .isolatedSharedState, or inside withSharedStorage(.isolated)")
    }
    TestingStandIns.install()
    return RemoteConfigTestValues(config: config.forCurrentScope)
  }

  /// Makes `.remoteConfig` keys created from now on for `config`, in the current isolated
  /// scope, read the real config. Outside isolated scopes keys always do.
  public static func useRealConfig(_ config: RemoteConfig) {
    config.useRealConfigInCurrentScope()
  }

  /// Makes `value` the active value of `key`: holders of the key update at once, as after an
  /// activation.
  ///
  /// - Precondition: The value can be written as JSON (every built-in config type and every
  ///   `Codable` one can).
  public func set<Value>(_ key: ConfigKey<Value>, to value: Value) {
    guard let json = value.configJSON else {
      preconditionFailure("\(Value.self) cannot be written as a config value")
    }
    set(key.name, json: json)
  }

  /// Makes `json` the active entry `name`, in the form a source would send it (a value that
  /// does not decode as a key's type is reported as it would be after a fetch).
  public func set(_ name: String, json: JSONValue) {
    config.activateEntries { $0[name] = json }
  }

  /// Removes the active value of `key`: holders return to the default.
  public func remove<Value>(_ key: ConfigKey<Value>) {
    config.activateEntries { $0[key.name] = nil }
  }

  /// Removes every active value.
  public func removeAll() { config.activateEntries { $0 = [:] } }
}
