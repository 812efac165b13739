import Foundation
import Streams
import Tether

/// What an isolated storage scope (a test's) does with `.remoteConfig` keys: they never reach
/// a network through a config the test did not build.
///
/// A config created inside the scope (the test's own, typically on a stub source) is the one
/// its keys read. Any other config — ``RemoteConfig/shared``, or the app's own made before the
/// scope — is swapped, once per scope, for a stand-in (``ScopedStandIns``): a config with the
/// real one's defaults (they are code, not network), no source and no active values. The test
/// sets values on it through TetherTesting's `RemoteConfigTestValues`, which activates them
/// with ``activateEntries(_:)``. The stand-in is an ordinary sourceless `RemoteConfig`, not a
/// test fake, so this works the same whether or not TetherTesting is linked: without it, keys
/// read the defaults.
extension RemoteConfig {
  /// The config a key created now reads: this one, or in an isolated scope that did not create
  /// it, its stand-in there.
  package var forCurrentScope: RemoteConfig {
    guard let standIns = ScopedStandIns<RemoteConfig>.current else { return self }
    return standIns.standIn(for: self) { real in
      let standIn = RemoteConfig()
      let defaults = real.state.withLock { $0.defaults }
      standIn.state.withLock { $0.defaults = defaults }
      return standIn
    }
  }

  /// Makes keys created for this config from now on in the current isolated scope read it,
  /// not a stand-in (nothing changes outside isolated scopes). A config created in an isolated
  /// scope is marked so when it is created.
  package func useRealConfigInCurrentScope() { ScopedStandIns<RemoteConfig>.current?.useReal(self) }

  /// Changes the active entries at once, as an activation would: holders and observers hear of
  /// every entry that changed, and lookups see the new values. No fetch, no cache write. What
  /// the values a test sets go through.
  package func activateEntries(_ change: (inout [String: JSONValue]) -> Void) {
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
      noteAnswer(in: &state)
    }
    deliver()
  }
}
