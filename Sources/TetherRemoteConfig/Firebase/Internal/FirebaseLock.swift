import Synchronization

/// A `Synchronization.Mutex` whose critical sections ThreadSanitizer can see.
///
/// Workaround: on Linux the contended path of `Mutex` (the futex calls in
/// libswiftSynchronization's `_lockSlow`/`_unlockSlow`) is not instrumented, so TSan sees no
/// happens-before edge between two threads' critical sections and reports false races on the
/// protected state. An acquiring load at the start and a releasing increment at the end of each
/// critical section, on an instrumented atomic, give TSan the ordering the mutex already
/// guarantees (the same device as Streams' `Locked` and TestSupport's `LockedState`).
struct FirebaseLock<State: Sendable>: ~Copyable, Sendable {
  private let mutex: Mutex<State>
  private let edge = Atomic<Int>(0)

  init(_ initial: State) {
    mutex = Mutex(initial)
  }

  /// Runs `body` with exclusive access to the state; `body` never calls out.
  borrowing func withLock<Result: Sendable, E: Error>(
    _ body: (inout State) throws(E) -> Result
  ) throws(E) -> Result {
    try mutex.withLock { (state: inout State) throws(E) -> Result in
      _ = edge.load(ordering: .acquiring)
      defer { edge.wrappingAdd(1, ordering: .releasing) }
      return try body(&state)
    }
  }
}
