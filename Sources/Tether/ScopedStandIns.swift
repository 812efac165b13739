import TetherSupport

/// The seam between an isolated storage scope (a test's) and the objects that would otherwise
/// reach outside the process: an etcd cluster, a remote config.
///
/// A networked strategy asks ``current`` for its object's stand-in once, when a key is
/// created. Each real object gets one stand-in per scope, made on first use by the maker a test
/// library installed for `Object` with ``provide(_:)`` (TetherTesting installs an in-memory
/// etcd) or, when none is installed, by the strategy's own fallback, which must not reach a
/// network either. The real object is kept alive beside its stand-in, so its identifier is
/// never reused for another. An object marked with ``useReal(_:)`` (one the test created in
/// the scope, or asked for by name) stands for itself. The process scope has no stand-ins:
/// ``current`` is `nil` there, and keys use the objects they name.
///
/// Production modules hold only this seam and their fallback; the stand-ins themselves live in
/// TetherTesting, so a program that does not link it carries none of them.
package final class ScopedStandIns<Object: AnyObject & Sendable>: Sendable {
  private struct State {
    var standIns: [ObjectIdentifier: (real: Object, standIn: Object)] = [:]
    var real: [ObjectIdentifier: Object] = [:]
  }
  private let state = Lock(State())

  private init() {}

  /// The current scope's stand-ins for `Object`; `nil` outside isolated scopes.
  package static var current: ScopedStandIns? {
    let storage = SharedStorage.current
    guard storage.isIsolated else { return nil }
    return storage.scopedValue { ScopedStandIns() }
  }

  /// Makes every isolated scope use `make` for the stand-ins of `Object` from now on (a test
  /// library installs its maker once; the last one installed wins). `make` runs in the scope,
  /// with the real object, when a key first needs a stand-in for it.
  package static func provide(_ make: @escaping @Sendable (Object) -> Object) {
    installedMakers.withLock { $0[ObjectIdentifier(Object.self)] = make }
  }

  /// The maker installed for `Object`, if a test library installed one.
  private static var provided: (@Sendable (Object) -> Object)? {
    installedMakers.withLock { $0[ObjectIdentifier(Object.self)] }
      as? @Sendable (Object) -> Object
  }

  /// What keys created for `object` in this scope use: `object` itself once marked real, or
  /// its stand-in, made the first time by the installed maker or else by `fallback`.
  package func standIn(for object: Object, fallback: (Object) -> Object) -> Object {
    let id = ObjectIdentifier(object)
    if let found = state.withLock({ $0.real[id] ?? $0.standIns[id]?.standIn }) { return found }
    let standIn = Self.provided?(object) ?? fallback(object)
    return state.withLock { state in
      if let raced = state.real[id] ?? state.standIns[id]?.standIn { return raced }
      state.standIns[id] = (object, standIn)
      return standIn
    }
  }

  /// Lets keys created for `object` from now on in this scope use it, not a stand-in.
  package func useReal(_ object: Object) {
    state.withLock { $0.real[ObjectIdentifier(object)] = object }
  }
}

/// The stand-in makers test libraries installed, by object type (``ScopedStandIns/provide(_:)``).
private let installedMakers = Lock<[ObjectIdentifier: any Sendable]>([:])
