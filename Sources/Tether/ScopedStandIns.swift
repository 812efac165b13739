import Streams
import TetherSupport

/// The stand-ins an isolated storage scope (a test's) gives to objects that would otherwise
/// reach outside the process: an etcd cluster, a remote config.
///
/// Keys created in an isolated scope ask for their object's stand-in once, when they are
/// created. Each real object gets one stand-in, made on first use; the real object is kept
/// alive beside it, so its identifier is never reused for another. An object the test marked
/// with ``useReal(_:)`` stands for itself from then on. The process scope has no stand-ins:
/// ``current`` is `nil` there, and keys use the objects they name.
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

  /// What keys created for `object` in this scope use: its stand-in (made by `makeStandIn`
  /// the first time), or `object` itself once marked real.
  package func standIn(for object: Object, makeStandIn: () -> Object) -> Object {
    let id = ObjectIdentifier(object)
    if let found = state.withLock({ $0.real[id] ?? $0.standIns[id]?.standIn }) { return found }
    let standIn = makeStandIn()
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
