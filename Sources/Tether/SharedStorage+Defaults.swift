import Foundation

extension SharedStorage {
  /// The `UserDefaults` that `.appStorage` keys created in this scope use when they name no
  /// store: `UserDefaults.standard` in ``process``; in an isolated scope (and in ``process``
  /// in a process running tests), an ephemeral store of the scope's own, which starts empty
  /// and is never written to disk.
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
  /// A value set directly on an ephemeral store reaches the entry's holders at once, before
  /// `set(_:forKey:)` returns, as `UserDefaults` observation does on Apple platforms.
  public var defaults: UserDefaults {
    guard keepsDefaultsInMemory else { return .standard }
    return scopedValue(EphemeralDefaults.self) { EphemeralDefaults() }.defaults.store
  }
}

/// An isolated scope's `UserDefaults`.
private final class EphemeralDefaults: Sendable {
  let defaults = SendableDefaults(EphemeralUserDefaults())
}

/// A `UserDefaults` whose entries live only in memory, and that tells observers of an entry
/// when it is set or removed.
///
/// Not a plain suite that is never synchronized: swift-corelibs-foundation flushes every
/// changed suite to `~/.config` when any store synchronizes (seen with Swift 6.3), so an
/// isolated scope's values would reach the disk. Every entry point that reads or writes is
/// overridden; the typed accessors (`bool(forKey:)`, `set(_:forKey:)` for an `Int`, …) go
/// through them.
final class EphemeralUserDefaults: UserDefaults {
  // `entries` and `observers` are only touched while `lock` is held (`SendableDefaults`
  // carries the store across threads); the values are property-list values, which nothing
  // mutates once stored. Observers are called after the lock is released.
  private let lock = NSLock()
  private var entries: [String: Any] = [:]
  private var observers: [String: [Int: @Sendable () -> Void]] = [:]
  private var nextObserver = 0

  /// Calls `changed` after each set or removal of `key`, on the thread that made it, until the
  /// returned token is cancelled.
  func observe(_ key: String, _ changed: @escaping @Sendable () -> Void) -> CancelOnce {
    let id = lock.withLock {
      nextObserver += 1
      observers[key, default: [:]][nextObserver] = changed
      return nextObserver
    }
    let store = SendableDefaults(self)
    return CancelOnce {
      guard let self = store.store as? EphemeralUserDefaults else { return }
      self.lock.withLock { _ = self.observers[key]?.removeValue(forKey: id) }
    }
  }

  private func changed(_ key: String) {
    let toCall = lock.withLock { observers[key].map { Array($0.values) } ?? [] }
    for observer in toCall { observer() }
  }

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
    changed(defaultName)
  }

  override func removeObject(forKey defaultName: String) {
    _ = lock.withLock { entries.removeValue(forKey: defaultName) }
    changed(defaultName)
  }

  override func dictionaryRepresentation() -> [String: Any] {
    lock.withLock { entries }
  }

  override func synchronize() -> Bool { true }
}
