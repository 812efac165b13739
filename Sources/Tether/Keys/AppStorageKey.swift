import Foundation
import Streams
import TetherSupport

/// A key for a value stored in `UserDefaults`, as swift-sharing's `.appStorage`.
///
/// Create one with `.appStorage(_:store:)`:
///
/// ```swift
/// @Shared(.appStorage("hasSeenOnboarding")) var hasSeenOnboarding = false
/// @Shared(.appStorage("volume", store: UserDefaults(suiteName: "group.app")!)) var volume = 0.5
/// ```
///
/// - Values: `Bool`, `Int`, `Double`, `String`, `[String]`, `URL` (a file URL stored as its
///   path, any other as its absolute string), `Data`, `Date`, `RawRepresentable` types whose
///   raw value is `Int` or `String`, and optionals of all of these (`nil` removes the entry):
///   swift-sharing's list. An entry missing, or of another type, is the declared default.
/// - Store: `UserDefaults.standard` unless `store` is given; in an isolated scope (a test's),
///   and anywhere in a process running tests, an ephemeral store instead
///   (``SharedStorage/defaults``), so tests never read or write the user's defaults. A test
///   that means to use real defaults names the store: `store: UserDefaults(suiteName: …)!`.
/// - Saves write the entry and `synchronize()` the store, so another process sees it at once
///   (on Linux, swift-corelibs-foundation writes the defaults file only then).
/// - On Linux each save, and each reload after another process's change, holds the defaults
///   file's sidecar lock, `.<suite>.plist.tether-lock` next to it (created on the first save,
///   never removed). So processes that use Tether change one file in turns: a change is never
///   overwritten by an older one, and a reload never reads a write half done. Entries merge by
///   key; a process writing the file without Tether is not held back.
/// - Changes made elsewhere reach holders: another process's (or another `UserDefaults`
///   instance's, once synchronized). On Linux the key watches the defaults file
///   (`$XDG_CONFIG_HOME/<suite>.plist`, by default `~/.config`) with Tether's file watcher;
///   on Apple platforms it listens for `UserDefaults.didChangeNotification`. A value set
///   directly on an isolated scope's ephemeral store reaches holders before `set(_:forKey:)`
///   returns.
public struct AppStorageKey<Value: Sendable>: SharedKey, CustomStringConvertible {
  /// The store and the entry's name: holders of both share one value.
  public struct ID: Hashable, Sendable {
    let store: ObjectIdentifier
    let key: String
  }

  /// The entry's name in the store.
  public let key: String
  /// The store the entry lives in.
  public var store: UserDefaults { defaults.store }
  let defaults: SendableDefaults
  let lookup: AppStorageLookup<Value>
  /// Whether saves synchronize and changes are watched: not for an isolated scope's store.
  let persists: Bool

  init(_ key: String, store: UserDefaults?, lookup: AppStorageLookup<Value>) {
    self.key = key
    self.lookup = lookup
    if let store {
      defaults = SendableDefaults(store)
      persists = true
    } else {
      // Chosen once, when the key is created, as a file key chooses its files.
      let storage = SharedStorage.current
      defaults = SendableDefaults(storage.defaults)
      persists = !storage.keepsDefaultsInMemory
    }
  }

  /// The store and the entry's name.
  public var id: ID { ID(store: ObjectIdentifier(store), key: key) }

  /// A description for diagnostics: `.appStorage("name")`.
  public var description: String { ".appStorage(\"\(key)\")" }

  /// Reads the entry; a missing entry (or one of another type) is the initial value.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    if let value = store.object(forKey: key).flatMap(lookup.read) {
      continuation.resume(returning: value)
    } else {
      continuation.resumeReturningInitialValue()
    }
  }

  /// Watches the store for changes made elsewhere, until the last holder goes away.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    let (defaults, key, lookup) = (defaults, key, lookup)
    let last = Lock(AppStorageLookup<Value>.fingerprint(store.object(forKey: key)))
    let read = { @Sendable () -> (fingerprint: Data?, value: Value?) in
      let raw = defaults.store.object(forKey: key)
      return (AppStorageLookup<Value>.fingerprint(raw), raw.flatMap(lookup.read))
    }
    let deliver = { @Sendable (entry: (fingerprint: Data?, value: Value?)) in
      let changed = last.withLock { last in
        defer { last = entry.fingerprint }
        return last != entry.fingerprint
      }
      guard changed else { return }
      if let value = entry.value {
        subscriber.yield(value)
      } else {
        subscriber.yieldReturningInitialValue()
      }
    }
    guard persists else {
      // An isolated scope's store: other code's `set(_:forKey:)` reaches holders at once, as
      // swift-sharing's tests expect; a holder's own save is already its value.
      guard let ephemeral = store as? EphemeralUserDefaults else { return .empty }
      let observation = ephemeral.observe(key) {
        guard !AppStorageSave.inProgress else { return }
        deliver(read())
      }
      return SharedSubscription { observation.cancel() }
    }
    // Read while the file's lock is held; compared and delivered after.
    let changes = DefaultsChanges(defaults, read: read, changed: deliver)
    return SharedSubscription { changes.cancel() }
  }

  /// Writes the entry (removes it for `nil`) and synchronizes the store.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    // Another process's save must not land between this one's write and its read-back (see
    // `SendableDefaults.changing`): on Linux a persistent store's save holds its file's lock.
    #if os(Linux)
    let lockedFile = persists ? DefaultsChanges.file(of: store) : nil
    #else
    let lockedFile: String? = nil
    #endif
    let written = SendableDefaults.changing(lockedFile) { () -> Bool in
      AppStorageSave.$inProgress.withValue(true) {
        if let raw = lookup.write(value) {
          store.set(raw, forKey: key)
        } else {
          store.removeObject(forKey: key)
        }
      }
      return !persists || store.synchronize()
    }
    if written {
      continuation.resume()
    } else {
      continuation.resume(
        throwing: CocoaError(
          .fileWriteUnknown,
          userInfo: [
            NSLocalizedDescriptionKey: "UserDefaults could not write \(description)"
          ]))
    }
  }
}

/// Whether the current thread is inside an `.appStorage` save: its write needs no
/// notification back to the holders, which already hold the value.
enum AppStorageSave {
  @TaskLocal static var inProgress = false
}

/// A `UserDefaults` that closures and keys may carry across threads.
///
/// `UserDefaults` is documented thread-safe: every read and write takes its own lock (on
/// Linux, swift-corelibs-foundation's lock around CFPreferences' domains). Only the
/// reference is carried here, and swift-corelibs-foundation does not mark it `Sendable`.
struct SendableDefaults: @unchecked Sendable {
  let store: UserDefaults
  init(_ store: UserDefaults) { self.store = store }

  /// Makes each change of a store (set or remove, then `synchronize()`) and each reload after
  /// another process's change (`synchronize()` in ``DefaultsChanges``) take turns: within the
  /// process always, and, given the store's defaults `file` (Linux), with every other process
  /// that uses Tether, through the file's sidecar lock `.NAME.tether-lock` (``FileLock``).
  ///
  /// - Within the process: on Linux a `synchronize()` of a store with no pending change
  ///   re-reads its file. Run between another thread's `set` and that thread's
  ///   `synchronize()`, it replaced the set value with the file's and left nothing to write:
  ///   the change never reached the file nor the other processes (seen in loaded test runs).
  /// - Across processes: swift-corelibs-foundation writes the file in place, then reads it
  ///   back, and if another process wrote in between it re-applies its pending change to that
  ///   newer file and writes again. An older change then overwrote a newer one that the other
  ///   process had already made and seen land (a 40-turn two-process test lost one in 4 of 9
  ///   runs). A reload could also read a write half done. Holding the lock for the whole write and
  ///   read-back, and for each reload, rules out both for processes that use Tether; a
  ///   process that writes the file without Tether is not held back.
  ///
  /// If the lock file cannot be opened (a read-only directory, say), the body runs with the
  /// process-wide lock only, as `UserDefaults` alone would.
  static func changing<R: Sendable>(_ file: String? = nil, _ body: () -> R) -> R {
    synchronization.withLock { _ in
      guard let file else { return body() }
      var result: R?
      let outcome = FileLock().withLock(at: FileSystem.lockPath(of: file), waiting: true) {
        result = body()
      }
      if case .locked = outcome, let result { return result }
      return body()
    }
  }

  private static let synchronization = Lock(())
}

/// How one value type is read from and written to a property-list entry.
struct AppStorageLookup<Value: Sendable>: Sendable {
  /// The value in a stored entry, or `nil` when the entry is of another type.
  let read: @Sendable (Any) -> Value?
  /// The entry for a value, or `nil` to remove it.
  let write: @Sendable (Value) -> Any?

  /// What tells two stored entries apart: the entry as a binary property list (`nil` for a
  /// missing entry).
  static func fingerprint(_ raw: Any?) -> Data? {
    raw.flatMap {
      try? PropertyListSerialization.data(fromPropertyList: ["v": $0], format: .binary, options: 0)
    }
  }

  static func scalar<T: Sendable>(_ read: @escaping @Sendable (Any) -> T?) -> AppStorageLookup<T> {
    AppStorageLookup<T>(read: read, write: { $0 })
  }

  /// The optional form of `lookup`: `nil` removes the entry, and an entry of another type is
  /// the declared default (as swift-sharing reads it), not `nil`.
  static func optional<T>(_ lookup: AppStorageLookup<T>) -> AppStorageLookup<T?> {
    AppStorageLookup<T?>(
      read: { lookup.read($0).map(Optional.some) }, write: { $0.flatMap(lookup.write) })
  }
}

extension AppStorageLookup {
  static var bool: AppStorageLookup<Bool> { scalar { $0 as? Bool } }
  static var int: AppStorageLookup<Int> { scalar { $0 as? Int } }
  static var double: AppStorageLookup<Double> {
    scalar { ($0 as? Double) ?? ($0 as? Int).map(Double.init) }
  }
  static var string: AppStorageLookup<String> { scalar { $0 as? String } }
  static var strings: AppStorageLookup<[String]> { scalar { $0 as? [String] } }
  static var data: AppStorageLookup<Data> { scalar { $0 as? Data } }
  static var date: AppStorageLookup<Date> { scalar { $0 as? Date } }
  /// URLs: a file URL is stored as its path, what `UserDefaults.set(_:forKey:)` writes for one
  /// and `url(forKey:)` reads back on every platform; any other URL as its absolute string.
  ///
  /// swift-corelibs-foundation cannot store a non-file URL: its `set(_:forKey:)` keeps only the
  /// URL's path (`https://a.b/docs?q=1` becomes `/docs`, seen with Swift 6.3), and its
  /// `url(forKey:)` reads every string as a file path. So Tether writes the absolute string,
  /// which other code reads with `string(forKey:)` and `URL(string:)`. Read back: a path (`/…`
  /// or `~…`) is a file URL, other strings are parsed as URLs, and an Apple store's archived
  /// URL is unarchived.
  static var url: AppStorageLookup<URL> {
    AppStorageLookup<URL>(
      read: { raw in
        if let url = raw as? URL { return url }
        if let text = raw as? String {
          if text.hasPrefix("/") || text.hasPrefix("~") {
            return URL(fileURLWithPath: (text as NSString).expandingTildeInPath)
          }
          return URL(string: text).flatMap { $0.scheme == nil ? nil : $0 }
        }
        if let data = raw as? Data {
          let archived = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NSURL.self, from: data)
          return archived?.absoluteURL
        }
        return nil
      },
      write: { $0.isFileURL ? $0.path : $0.absoluteString })
  }
  static func rawInt<R: RawRepresentable & Sendable>(_: R.Type) -> AppStorageLookup<R>
  where R.RawValue == Int {
    AppStorageLookup<R>(read: { ($0 as? Int).flatMap(R.init(rawValue:)) }, write: { $0.rawValue })
  }
  static func rawString<R: RawRepresentable & Sendable>(_: R.Type) -> AppStorageLookup<R>
  where R.RawValue == String {
    AppStorageLookup<R>(
      read: { ($0 as? String).flatMap(R.init(rawValue:)) }, write: { $0.rawValue })
  }
}
