import Streams
import Synchronization
import TetherSupport

/// A storage scope: the references, in-memory values, files and strategy defaults that shared
/// values see.
///
/// Code normally uses the process-wide scope, ``process``. Tests give a block of code its own,
/// empty scope with `withSharedStorage(.isolated) { ... }` (or the `TetherTesting` trait
/// `.isolatedSharedState`), so tests running in parallel never see each other's values, and
/// file keys in it use an in-memory file system instead of the disk (see ``files``):
///
/// ```swift
/// await withSharedStorage(.isolated) {
///   @Shared(.inMemory("count")) var count = 0   // a fresh value, whatever other tests do
/// }
/// ```
///
/// The scope is a task-local value: child tasks inherit it, detached tasks do not.
public final class SharedStorage: Sendable {
  let registry = ReferenceRegistry()
  private let scopedValues = Lock<[ObjectIdentifier: any Sendable]>([:])

  /// The scope's in-memory file system, which `.fileStorage` keys created in the scope use
  /// instead of the disk; `nil` when they use real files (``process`` outside tests, and scopes
  /// created with `isolated(files: .real)`).
  public let files: InMemoryFiles?

  /// Whether `.appStorage` keys that name no store use an ephemeral store of the scope's own
  /// (isolated scopes, and ``process`` in a process running tests) instead of
  /// `UserDefaults.standard`.
  let keepsDefaultsInMemory: Bool

  /// Where `.fileStorage` keys created in an isolated scope keep their files.
  public enum Files: Sendable {
    /// In the scope's own ``InMemoryFiles``: real paths are never touched (the default).
    case inMemory
    /// On disk, at the paths the keys name. For tests that need the disk itself (watching,
    /// permissions, other processes): give their keys paths in a temporary directory.
    case real
  }

  private init(files: InMemoryFiles?, keepsDefaultsInMemory: Bool) {
    self.files = files
    self.keepsDefaultsInMemory = keepsDefaultsInMemory
  }

  /// The process-wide scope that code outside `withSharedStorage` uses. Its file keys use the
  /// disk, and its `.appStorage` keys `UserDefaults.standard`.
  ///
  /// In a process running tests (XCTest's or Swift Testing's: an `.xctest` bundle or Swift
  /// Testing's options in the arguments, or XCTest's environment with a test bundle loaded),
  /// it keeps both in memory instead, so a test never reads or writes the user's files or
  /// defaults, whether or not it uses the `.isolatedSharedState` trait. A test that needs the
  /// disk opts in with `withSharedStorage(.isolated(files: .real))` (or the trait
  /// `.isolatedSharedState(files: .real)`); an `.appStorage` key that names its `store`
  /// uses that store. A child process a test starts is not a test process: its keys use the
  /// disk.
  public static let process = SharedStorage(
    files: TestProcess.isRunningTests ? InMemoryFiles() : nil,
    keepsDefaultsInMemory: TestProcess.isRunningTests)

  /// A new, empty scope whose file keys read and write an in-memory file system
  /// (``files``), never the disk. Each use creates another one.
  public static var isolated: SharedStorage { isolated(files: .inMemory) }

  /// A new, empty scope whose file keys use `files`: an in-memory file system of the scope, or
  /// the real disk.
  ///
  /// ```swift
  /// try await withSharedStorage(.isolated(files: .real)) {
  ///   @Shared(.fileStorage(temporaryDirectory.appending(path: "a.json"))) var value = 0
  /// }
  /// ```
  public static func isolated(files: Files) -> SharedStorage {
    SharedStorage(files: files == .inMemory ? InMemoryFiles() : nil, keepsDefaultsInMemory: true)
  }

  /// The scope the current task uses.
  public static var current: SharedStorage { taskLocal }

  @TaskLocal static var taskLocal = SharedStorage.process

  /// Whether this is an isolated scope (a test's), not ``process``: networked strategies in
  /// TetherEtcd and TetherRemoteConfig then stand in for their servers.
  package var isIsolated: Bool { self !== SharedStorage.process }

  /// A per-scope value of type `T` for strategies that need scope-wide state (for example
  /// default directories, or the in-memory stand-ins of networked keys), created by `make` on
  /// first use.
  package func scopedValue<T: Sendable>(_: T.Type = T.self, make: () -> T) -> T {
    if let found = scopedValues.withLock({ $0[ObjectIdentifier(T.self)] }) as? T {
      return found
    }
    let made = make()
    return scopedValues.withLock { values -> T in
      if let found = values[ObjectIdentifier(T.self)] as? T { return found }
      values[ObjectIdentifier(T.self)] = made
      return made
    }
  }
}

/// Runs `operation` with `storage` as the current storage scope.
///
/// Shared values created inside see only that scope's references and in-memory values.
///
/// ```swift
/// withSharedStorage(.isolated) {
///   @Shared(.inMemory("user")) var user = "guest"
/// }
/// ```
public func withSharedStorage<R>(
  _ storage: SharedStorage, operation: () throws -> R
) rethrows -> R {
  try SharedStorage.$taskLocal.withValue(storage, operation: operation)
}

/// Runs the asynchronous `operation` with `storage` as the current storage scope.
///
/// Child tasks created inside inherit the scope.
public func withSharedStorage<R>(
  _ storage: SharedStorage, isolation: isolated (any Actor)? = #isolation,
  operation: () async throws -> R
) async rethrows -> R {
  try await SharedStorage.$taskLocal.withValue(storage, operation: operation, isolation: isolation)
}
