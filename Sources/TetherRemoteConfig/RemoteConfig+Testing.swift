import Foundation
import Streams
import Tether

/// What a `RemoteConfig` is in an isolated storage scope (a test's): a stand-in that reads the
/// values the test sets, never a network. TetherTesting's `RemoteConfigTestValues` is its face.
///
/// A `.remoteConfig` key created in an isolated scope reads the scope's stand-in for the config
/// it names, picked once, when the key is created. The stand-in starts with the real config's
/// defaults (they are code, not network) and no active values; the test activates values
/// itself. A test that needs the real config (its source, its cache) asks for it first.
final class RemoteConfigStandIns: Sendable {
  private struct State {
    /// Each real config (kept alive, so its identifier is never reused) and its stand-in.
    var standIns: [ObjectIdentifier: (real: RemoteConfig, standIn: RemoteConfig)] = [:]
    var real: [ObjectIdentifier: RemoteConfig] = [:]
  }
  private let state = Lock(State())

  /// The current scope's stand-ins; `nil` outside isolated scopes.
  static var current: RemoteConfigStandIns? {
    let storage = SharedStorage.current
    guard storage.isIsolated else { return nil }
    return storage.scopedValue { RemoteConfigStandIns() }
  }

  func config(for config: RemoteConfig) -> RemoteConfig {
    let id = ObjectIdentifier(config)
    if let found = state.withLock({ $0.real[id] ?? $0.standIns[id]?.standIn }) { return found }
    let standIn = RemoteConfig()
    let defaults = config.state.withLock { $0.defaults }
    standIn.state.withLock { $0.defaults = defaults }
    return state.withLock { state in
      if let raced = state.real[id] ?? state.standIns[id]?.standIn { return raced }
      state.standIns[id] = (config, standIn)
      return standIn
    }
  }

  func useReal(_ config: RemoteConfig) {
    state.withLock { $0.real[ObjectIdentifier(config)] = config }
  }
}

extension RemoteConfig {
  /// The config a key created now reads: this one, or in an isolated scope its stand-in.
  package var forCurrentScope: RemoteConfig {
    RemoteConfigStandIns.current?.config(for: self) ?? self
  }

  /// Makes keys created for this config from now on in the current isolated scope read it,
  /// not a stand-in (nothing changes outside isolated scopes).
  package func useRealConfigInCurrentScope() { RemoteConfigStandIns.current?.useReal(self) }

  /// Changes the active entries at once, as an activation would: holders and observers hear of
  /// every entry that changed, and lookups see the new values. No fetch, no cache write.
  package func activateTestEntries(_ change: (inout [String: JSONValue]) -> Void) {
    state.withLock { state in
      let old = state.active.entries
      change(&state.active.entries)
      state.active.fetchTime = Date()
      var changed = Set<String>()
      for (name, value) in state.active.entries where old[name] != value { changed.insert(name) }
      for name in old.keys where state.active.entries[name] == nil { changed.insert(name) }
      if !changed.isEmpty {
        invalidate(changed, in: &state)
        enqueue(.changed(changed, activation: true), in: &state)
      }
    }
    deliver()
  }
}
