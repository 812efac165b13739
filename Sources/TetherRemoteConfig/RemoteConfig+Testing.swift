import Foundation
import Streams
import Tether

extension RemoteConfig {
  /// The config a key created now reads: this one, or in an isolated scope (a test's) its
  /// stand-in, which reads the values the test sets and never a network. TetherTesting's
  /// `RemoteConfigTestValues` is its face.
  ///
  /// The stand-in starts with the real config's defaults (they are code, not network) and no
  /// active values; the test activates values itself. A test that needs the real config (its
  /// source, its cache) asks for it first (``useRealConfigInCurrentScope()``).
  package var forCurrentScope: RemoteConfig {
    guard let standIns = ScopedStandIns<RemoteConfig>.current else { return self }
    return standIns.standIn(for: self) {
      let standIn = RemoteConfig()
      let defaults = state.withLock { $0.defaults }
      standIn.state.withLock { $0.defaults = defaults }
      return standIn
    }
  }

  /// Makes keys created for this config from now on in the current isolated scope read it,
  /// not a stand-in (nothing changes outside isolated scopes).
  package func useRealConfigInCurrentScope() { ScopedStandIns<RemoteConfig>.current?.useReal(self) }

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
