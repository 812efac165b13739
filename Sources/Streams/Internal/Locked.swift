import Synchronization

/// A `Mutex` whose state may hold values that are not `Sendable`: subscribers, elements.
///
/// `Mutex.withLock` takes and returns `sending` values, which region analysis cannot prove
/// for a subscriber that arrived as a parameter and is later handed back out. The lock still
/// makes every access exclusive; what the compiler cannot check is that the values are used
/// safely once outside, which the public types guarantee by being `Sendable` only when their
/// elements are (a subject whose `Output` is not `Sendable` cannot cross threads).
///
/// (The boxes are top-level internal types: nesting them privately in this generic
/// `~Copyable` struct crashes the 6.3 compiler with "Global is external, but doesn't have
/// external or weak linkage".)
struct Locked<State>: ~Copyable, Sendable {
  private let mutex: Mutex<LockedBox<State>>

  init(_ state: State) { mutex = Mutex(LockedBox(state: state)) }

  /// Runs `body` with exclusive access to the state. `body` must not call out.
  @inline(__always)
  func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
    try mutex.withLock { box in try LockedCarry(value: body(&box.state)) }.value
  }
}

// @unchecked: `state` is only reached inside `Locked.withLock`, under its mutex.
struct LockedBox<State>: @unchecked Sendable { var state: State }

// @unchecked: carries a result out of `Locked.withLock`; see `Locked`'s comment.
struct LockedCarry<T>: @unchecked Sendable { let value: T }
