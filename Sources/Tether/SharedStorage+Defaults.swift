import Foundation

extension SharedStorage {
  /// The `UserDefaults` that `.appStorage` keys created in this scope use when they name no
  /// store: `UserDefaults.standard` in ``process``; in an isolated scope, an ephemeral store of
  /// the scope's own, which starts empty and is never written to disk.
  ///
  /// Seed and inspect a test's values through it:
  ///
  /// ```swift
  /// @Test(.isolatedSharedState) func onboardingShowsOnce() {
  ///   SharedStorage.current.defaults.set(true, forKey: "hasSeenOnboarding")
  ///   @Shared(.appStorage("hasSeenOnboarding")) var seen = false
  ///   #expect(seen)
  /// }
  /// ```
  ///
  /// Seed before creating the keys: a change made directly on an ephemeral store is not
  /// watched (one made through a holder reaches every holder).
  public var defaults: UserDefaults {
    guard isIsolated else { return .standard }
    return scopedValue(EphemeralDefaults.self) { EphemeralDefaults() }.defaults.store
  }
}

/// An isolated scope's `UserDefaults`: a suite with a unique name that Tether never
/// synchronizes, so nothing of it reaches the disk.
private final class EphemeralDefaults: Sendable {
  let defaults = SendableDefaults(
    UserDefaults(suiteName: "tether-isolated-\(UUID().uuidString)") ?? UserDefaults())
}
