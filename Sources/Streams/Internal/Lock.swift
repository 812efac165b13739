import Synchronization

/// The one lock of Tether's modules: a `Mutex` whose hand-offs between threads
/// ThreadSanitizer can see, and whose state may hold values that are not `Sendable`
/// (subscribers, elements, continuations).
///
/// ThreadSanitizer: on Linux, `Mutex` takes a contended lock with a priority-inheritance
/// futex, so the kernel, not instrumented code, hands the lock over, and TSan misses the
/// happens-before edge and reports races on the state the lock protects (still so with the
/// Swift 6.3 toolchain). An extra acquire-load at the start and release-store at the end of
/// each critical section restores the edge; on x86 and ARM both are ordinary loads and stores.
///
/// Non-`Sendable` state: `Mutex.withLock` takes and returns `sending` values, which region
/// analysis cannot prove for a subscriber that arrived as a parameter and is later handed back
/// out. The lock still makes every access exclusive; what the compiler cannot check is that
/// the values are used safely once outside, which the public types guarantee by being
/// `Sendable` only when their elements are (a subject whose `Output` is not `Sendable` cannot
/// cross threads).
///
/// `package`: every module locks with it, so the sanitizer run covers them all without false
/// reports.
@usableFromInline
package struct Lock<State>: ~Copyable, Sendable {
  @usableFromInline let mutex: Mutex<LockBox<State>>
  @usableFromInline let handoff = Atomic<UInt8>(0)

  /// Creates a lock protecting `state`.
  @inlinable
  package init(_ state: State) {
    mutex = Mutex(LockBox(state: state))
  }

  /// Runs `body` with exclusive access to the state. `body` must not call out.
  @inlinable
  package func withLock<R, E: Error>(
    _ body: (inout State) throws(E) -> R
  ) throws(E) -> sending R {
    try mutex.withLock { (box: inout sending LockBox<State>) throws(E) -> sending R in
      _ = handoff.load(ordering: .acquiring)
      defer { handoff.store(0, ordering: .releasing) }
      // nonisolated(unsafe): hands the result out of the lock; see the type's comment. (A
      // wrapper struct would do too, but costs a generic metadata lookup per call in
      // unspecialised code.)
      nonisolated(unsafe) let result = try body(&box.state)
      return result
    }
  }
}

// @unchecked: `state` is only reached inside `Lock.withLock`, under its mutex. (A top-level
// type: nesting it privately in the generic `~Copyable` `Lock` crashes the 6.3 compiler with
// "Global is external, but doesn't have external or weak linkage".)
@usableFromInline
struct LockBox<State>: @unchecked Sendable {
  @usableFromInline var state: State
  @inlinable init(state: State) { self.state = state }
}
