import Foundation

/// Tells an `.appStorage` key that its `UserDefaults` may have changed elsewhere: another
/// process, or another instance of the same store. The one place the platforms differ.
///
/// - Linux: swift-corelibs-foundation posts no notification for changes, and another process's
///   change reaches this one only through the defaults file, which `synchronize()` re-reads.
///   So the file (`$XDG_CONFIG_HOME/<suite>.plist`, by default under `~/.config`; the
///   standard store's is named after the process) is watched with Tether's one
///   ``FileWatcher``, and each change synchronizes the store and runs `read` holding the
///   file's lock (``SendableDefaults/changing(_:_:)``), so it never reads another process's
///   write half done.
/// - Apple platforms: `UserDefaults.didChangeNotification` (cfprefsd keeps every process's
///   view current).
///
/// `read` and `changed` run on the watcher's queue (or the poster's thread); they must be
/// quick. `changed` runs after every lock is released, so it may save.
final class DefaultsChanges: Sendable {
  private let cancelToken: CancelOnce

  init<Read: Sendable>(
    _ defaults: SendableDefaults, read: @escaping @Sendable () -> Read,
    changed: @escaping @Sendable (Read) -> Void
  ) {
    #if os(Linux)
    let path = Self.file(of: defaults.store)
    cancelToken = FileWatcher.shared.watch(path) { _ in
      let value = SendableDefaults.changing(path) { () -> Read in
        _ = defaults.store.synchronize()
        return read()
      }
      changed(value)
    }
    #else
    let observer = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: defaults.store, queue: nil
    ) { _ in changed(read()) }
    let box = UncheckedObserver(observer)
    cancelToken = CancelOnce { NotificationCenter.default.removeObserver(box.observer) }
    #endif
  }

  func cancel() { cancelToken.cancel() }

  deinit { cancelToken.cancel() }

  #if os(Linux)
  /// Where swift-corelibs-foundation keeps `store`: `<config>/<suite>.plist`, where config is
  /// `$XDG_CONFIG_HOME` or `~/.config`, and the standard store's suite is the process name.
  ///
  /// Workaround: `UserDefaults` does not expose its suite name, so it is read from the
  /// instance's stored `suite` property by reflection (swift-corelibs-foundation 6.x).
  static func file(of store: UserDefaults) -> String {
    let suite =
      Mirror(reflecting: store).children.first { $0.label == "suite" }?.value as? String
    let environment = ProcessInfo.processInfo.environment
    let config =
      environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? (NSHomeDirectory() as NSString).appendingPathComponent(".config")
    let name = suite ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    return URL(fileURLWithPath: config).appendingPathComponent(name + ".plist")
      .standardizedFileURL.path
  }
  #else
  /// A notification observer token, which Foundation does not mark `Sendable`. It is never
  /// read or changed here, only handed back to `removeObserver`, which runs under
  /// NotificationCenter's own lock.
  private struct UncheckedObserver: @unchecked Sendable {
    let observer: any NSObjectProtocol
    init(_ observer: any NSObjectProtocol) { self.observer = observer }
  }
  #endif
}
