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

/// An isolated scope's `UserDefaults`.
private final class EphemeralDefaults: Sendable {
  let defaults = SendableDefaults(EphemeralUserDefaults())
}

/// A `UserDefaults` whose entries live only in memory.
///
/// Not a plain suite that is never synchronized: swift-corelibs-foundation flushes every
/// changed suite to `~/.config` when any store synchronizes (seen with Swift 6.3), so an
/// isolated scope's values would reach the disk. Every entry point that reads or writes is
/// overridden; the typed accessors (`bool(forKey:)`, `set(_:forKey:)` for an `Int`, …) go
/// through them.
private final class EphemeralUserDefaults: UserDefaults {
  // `entries` is only touched while `lock` is held (`SendableDefaults` carries the store
  // across threads); the values are property-list values, which nothing mutates once stored.
  private let lock = NSLock()
  private var entries: [String: Any] = [:]

  init() {
    // A suite no file exists for: the base class reads nothing of the user's.
    super.init(suiteName: "tether-isolated-\(UUID().uuidString)")!
  }

  override func object(forKey defaultName: String) -> Any? {
    lock.withLock { entries[defaultName] }
  }

  override func set(_ value: Any?, forKey defaultName: String) {
    guard let value else { return removeObject(forKey: defaultName) }
    lock.withLock { entries[defaultName] = value }
  }

  override func removeObject(forKey defaultName: String) {
    _ = lock.withLock { entries.removeValue(forKey: defaultName) }
  }

  override func dictionaryRepresentation() -> [String: Any] {
    lock.withLock { entries }
  }

  override func synchronize() -> Bool { true }
}
