import Synchronization

/// A storage scope: the references, in-memory values and strategy defaults that shared
/// values see.
///
/// Code normally uses the process-wide scope, ``process``. Tests give a block of code its own,
/// empty scope with `withSharedStorage(.isolated) { ... }` (or the `TetherTesting` trait
/// `.isolatedSharedState`), so tests running in parallel never see each other's values:
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

  private init() {}

  /// The process-wide scope that code outside `withSharedStorage` uses.
  public static let process = SharedStorage()

  /// A new, empty scope. Each use creates another one.
  public static var isolated: SharedStorage { SharedStorage() }

  /// The scope the current task uses.
  public static var current: SharedStorage { taskLocal }

  @TaskLocal static var taskLocal = SharedStorage.process

  /// A per-scope value of type `T` for strategies that need scope-wide state (for example
  /// default directories), created by `make` on first use.
  func scopedValue<T: Sendable>(_: T.Type = T.self, make: () -> T) -> T {
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
