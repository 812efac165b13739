/// What an observer of a ``RemoteConfig`` hears about.
enum ConfigEvent: Sendable {
  /// The observer was just registered; it should take the current value as its baseline.
  case registered
  /// These entries changed, by an activation or by new defaults.
  case changed(Set<String>, activation: Bool)
  /// The config answered its keys (see `RemoteConfig+FirstAnswer.swift`); every observer
  /// receives it.
  case answered(FirstAnswer)
}

/// An observer of a ``RemoteConfig``'s changes. Events reach observers one at a time, in the
/// order the changes happened, never under the config's lock.
final class ConfigObserver: Sendable {
  /// The entries the observer cares about; `nil` for every entry.
  let names: Set<String>?
  let handle: @Sendable (ConfigEvent) -> Void

  init(names: Set<String>?, handle: @escaping @Sendable (ConfigEvent) -> Void) {
    self.names = names
    self.handle = handle
  }

  func wants(_ event: ConfigEvent) -> Bool {
    guard let names, case .changed(let changed, _) = event else { return true }
    return !names.isDisjoint(with: changed)
  }
}
