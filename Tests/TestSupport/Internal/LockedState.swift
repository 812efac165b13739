import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// Workaround: on Linux the contended path of `Mutex` (the futex calls in
/// libswiftSynchronization's `_lockSlow`/`_unlockSlow`) is not instrumented, so when two threads
/// really contend, TSan sees no happens-before edge between the critical sections and reports
/// false "Swift access races" on the protected state. An acquiring load at the start and a
/// releasing increment at the end of each critical section, on an instrumented atomic, give TSan
/// the ordering the mutex already guarantees. Mutual exclusion still comes from the `Mutex`.
public struct LockedState<State: ~Copyable>: ~Copyable, Sendable {
  private let mutex: Mutex<State>
  private let edge = Atomic<Int>(0)

  /// A lock around `initial`.
  public init(_ initial: consuming sending State) {
    mutex = Mutex(initial)
  }

  /// Runs `body` with exclusive access to the state; never call out to user code from it.
  public borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending State) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    try mutex.withLock { (state: inout sending State) throws(E) -> sending Result in
      _ = edge.load(ordering: .acquiring)
      defer { edge.wrappingAdd(1, ordering: .releasing) }
      return try body(&state)
    }
  }
}
