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
/// Checked and unchecked: `withLock` and `init(_:)` take and give `sending` values, so the
/// compiler proves that nothing locked escapes into two isolation domains (Tether's keys,
/// references and engines use these). Streams' subscriptions keep subscribers and elements,
/// which are not `Sendable` and arrive as parameters that region analysis cannot prove
/// disconnected; they use `init(unchecked:)` and `withLockUnchecked`. There the lock still
/// makes every access exclusive, and the public types guarantee the rest by being `Sendable`
/// only when their elements are (a subject whose `Output` is not `Sendable` cannot cross
/// threads).
///
/// `package`: every module locks with it, so the sanitizer run covers them all without false
/// reports.
@usableFromInline
package struct Lock<State>: ~Copyable, Sendable {
  @usableFromInline let mutex: Mutex<LockBox<State>>
  @usableFromInline let handoff = Atomic<UInt8>(0)

  /// Creates a lock protecting `state`, which nothing else may reach afterwards.
  @inlinable
  package init(_ state: sending State) {
    mutex = Mutex(LockBox(state: state))
  }

  /// Creates a lock protecting `state`, which may be reachable from elsewhere (Streams'
  /// subscribers): the compiler does not check what the state shares.
  @inlinable
  package init(unchecked state: State) {
    mutex = Mutex(LockBox(state: state))
  }

  /// Runs `body` with exclusive access to the state. `body` must not call out. What goes in
  /// and out is checked: `body` may store only values nothing else can reach, and what it
  /// returns is handed over whole.
  @inlinable
  package func withLock<R, E: Error>(
    _ body: (inout sending State) throws(E) -> sending R
  ) throws(E) -> sending R {
    try mutex.withLock { (box: inout sending LockBox<State>) throws(E) -> sending R in
      _ = handoff.load(ordering: .acquiring)
      defer { handoff.store(0, ordering: .releasing) }
      return try body(&box.state)
    }
  }

  /// ``withLock(_:)`` without the checks on what goes in and out: for state holding values
  /// that are not `Sendable` (see the type's comment). `body` must not call out.
  @inlinable
  package func withLockUnchecked<R, E: Error>(
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
