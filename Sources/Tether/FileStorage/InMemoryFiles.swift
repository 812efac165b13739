import Foundation
import Streams
import Synchronization
import TetherSupport

/// The files of an isolated storage scope: an in-memory file system that `.fileStorage` keys
/// created in the scope read and write instead of the disk.
///
/// `withSharedStorage(.isolated)` and `TetherTesting`'s `.isolatedSharedState` give each scope
/// its own, empty `InMemoryFiles`, so a model that declares
/// `@Shared(.fileStorage(.settingsURL))` with a real path never touches that path in a test.
/// Seed a file before the code under test reads it, and inspect what it saved, by URL:
///
/// ```swift
/// withSharedStorage(.isolated) {
///   let files = SharedStorage.current.files!
///   files.write(Data(#"{"theme":"dark"}"#.utf8), to: settingsURL)  // seed
///   @Shared(.fileStorage(settingsURL)) var settings = Settings()   // reads "dark"
///   $settings.theme.withLock { $0 = "light" }
///   files.contents(of: settingsURL)                                 // the saved JSON
/// }
/// ```
///
/// Saves are written at once (there is no disk to spare, so no throttle). ``write(_:to:)`` and
/// ``removeItem(at:)`` act as another process would: holders of the file see the change. A
/// file that does not decode is moved aside (`NAME.corrupt-TIMESTAMP`) as on disk. Paths are
/// normalized by their text, like file keys' in the scope (`/a//b.json` and `/a/./b.json` are one
/// file; symbolic links are not followed, since nothing here looks at the disk).
///
/// A key keeps the scope it was *created* in: declare keys where they are used, or in computed
/// helpers (`static var settings: Self { .fileStorage(url) }`), not in a `static let` created
/// once for the whole process.
public final class InMemoryFiles: Sendable {
  private struct State {
    var contents: [String: Data] = [:]
    var watchers: [String: [Int: @Sendable (Data?) -> Void]] = [:]
    var nextWatcher = 0
    /// Completions of updates, in the order the updates stored their values (see `update`).
    var completions = DeliveryQueue<@Sendable () -> Void>()
  }

  private let state = Lock(State())
  /// Who runs `completions` (see `OrderedDelivery`).
  private let completing = OrderedDelivery()

  /// Creates an empty file system.
  public init() {}

  /// The contents of the file at `url`, or `nil` when there is none.
  public func contents(of url: URL) -> Data? {
    let path = Self.path(of: url)
    return state.withLock { $0.contents[path] }
  }

  /// Writes `data` to `url` as another process would: the holders of that file see the new
  /// value (or a load error if it does not decode).
  public func write(_ data: Data, to url: URL) {
    change(Self.path(of: url), to: data)
  }

  /// Deletes the file at `url` as another process would: its holders return to their default.
  public func removeItem(at url: URL) {
    change(Self.path(of: url), to: nil)
  }

  /// The URLs of every file, sorted by path.
  public var urls: [URL] {
    state.withLock { $0.contents.keys.sorted() }.map {
      URL(fileURLWithPath: $0, isDirectory: false)
    }
  }

  // MARK: - What file keys use

  /// The path file keys use for `url`.
  static func path(of url: URL) -> String { FileStorageKey<Data>.normalizeLexically(url) }

  func read(_ path: String) -> Data? { state.withLock { $0.contents[path] } }

  /// A key's own save: stored without telling the key's holders (they already have the value).
  func store(_ data: Data, at path: String) {
    state.withLock { $0.contents[path] = data }
  }

  /// Reads, transforms and writes the file at `path` under the file system's lock, so the
  /// update is atomic with respect to every other access; a thrown error writes nothing.
  ///
  /// `completion` gets the outcome after the lock is released, and completions run in the order
  /// the updates stored their values: a thread that finds completions running leaves its own to
  /// the running thread, which runs them in turn. (Two updates that each resumed on their own
  /// thread could hand the older value to the holder last.)
  func update<Result: Sendable>(
    _ path: String, _ body: (Data?) throws -> (Data, Result),
    completion: @escaping @Sendable (Swift.Result<Result, any Error>) -> Void
  ) {
    let runs = state.withLock { state -> Bool in
      let outcome = Swift.Result { () throws -> Result in
        let (data, result) = try body(state.contents[path])
        state.contents[path] = data
        return result
      }
      return completing.enqueue({ completion(outcome) }, in: &state.completions)
    }
    guard runs else { return }
    completing.drain(
      take: { batch in
        state.withLock { completing.take(from: &$0.completions, into: &batch) ? () : nil }
      },
      deliver: { next, _ in next() })
  }

  /// Moves a file aside as `NAME.corrupt-TIMESTAMP` and returns the new path.
  func moveAside(_ path: String) -> String? {
    let stamp = Date().formatted(
      .iso8601.year().month().day().time(includingFractionalSeconds: false).dateSeparator(.omitted)
        .timeSeparator(.omitted))
    let aside = "\(path).corrupt-\(stamp)"
    return state.withLock { state -> String? in
      guard let data = state.contents.removeValue(forKey: path) else { return nil }
      state.contents[aside] = data
      return aside
    }
  }

  /// Calls `handler` with the new contents (`nil`: deleted) after each external change of
  /// `path`, until the returned closure is called.
  func watch(_ path: String, _ handler: @escaping @Sendable (Data?) -> Void) -> @Sendable () -> Void
  {
    let id = state.withLock { state -> Int in
      defer { state.nextWatcher += 1 }
      state.watchers[path, default: [:]][state.nextWatcher] = handler
      return state.nextWatcher
    }
    return { [weak self] in
      self?.state.withLock { state in
        state.watchers[path]?[id] = nil
        if state.watchers[path]?.isEmpty == true { state.watchers[path] = nil }
      }
    }
  }

  private func change(_ path: String, to data: Data?) {
    // Handlers run outside the lock: they call into holders, which may read these files.
    let handlers = state.withLock { state -> [@Sendable (Data?) -> Void] in
      state.contents[path] = data
      return state.watchers[path].map { Array($0.values) } ?? []
    }
    for handler in handlers { handler(data) }
  }
}
