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
@usableFromInline
struct Locked<State>: ~Copyable, Sendable {
  @usableFromInline let mutex: Mutex<LockedBox<State>>

  @inlinable init(_ state: State) { mutex = Mutex(LockedBox(state: state)) }

  /// Runs `body` with exclusive access to the state. `body` must not call out.
  @inlinable
  func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
    try mutex.withLock { box in
      // nonisolated(unsafe): hands the result out of the lock; see the type's comment. (A
      // wrapper struct would do too, but costs a generic metadata lookup per call in
      // unspecialised code.)
      nonisolated(unsafe) let result = try body(&box.state)
      return result
    }
  }
}

// @unchecked: `state` is only reached inside `Locked.withLock`, under its mutex.
@usableFromInline
struct LockedBox<State>: @unchecked Sendable {
  @usableFromInline var state: State
  @inlinable init(state: State) { self.state = state }
}
