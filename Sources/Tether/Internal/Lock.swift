import Synchronization

/// A `Mutex` whose hand-offs between threads ThreadSanitizer can see.
///
/// On Linux, `Mutex` takes a contended lock with a priority-inheritance futex: the kernel, not
/// instrumented user code, performs the acquire, so ThreadSanitizer misses the
/// happens-before edge and reports races on the state the lock protects. An extra
/// acquire-load at the start and release-store at the end of each critical section restores
/// the edge; on x86 and ARM both are ordinary loads and stores.
///
/// `package`: Tether's other modules (HTTP, remote config, testing) lock with it too, so the
/// sanitizer run covers them without false reports.
@usableFromInline
package struct Lock<State>: ~Copyable, Sendable {
  @usableFromInline let mutex: Mutex<State>
  @usableFromInline let handoff = Atomic<UInt8>(0)

  /// Creates a lock protecting `state`.
  @inlinable
  package init(_ state: sending State) {
    mutex = Mutex(state)
  }

  /// Runs `body` with exclusive access to the state. `body` must not call out.
  @inlinable
  package func withLock<R, E: Error>(
    _ body: (inout sending State) throws(E) -> sending R
  ) throws(E)
    -> sending R
  {
    try mutex.withLock { (state: inout sending State) throws(E) -> sending R in
      _ = handoff.load(ordering: .acquiring)
      defer { handoff.store(0, ordering: .releasing) }
      return try body(&state)
    }
  }
}
