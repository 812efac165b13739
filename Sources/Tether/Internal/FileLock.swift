import Synchronization

/// The lock of the file strategy's shared state: a `Mutex` whose hand-offs between threads
/// ThreadSanitizer can see.
///
/// On Linux, `Mutex` takes a contended lock through a priority-inheritance futex: the kernel,
/// not instrumented code, performs the acquire, so ThreadSanitizer misses the happens-before
/// edge and reports races on the state the lock protects. An acquiring load at the start and
/// a releasing store at the end of each critical section restore the edge; on x86 and ARM
/// both are plain loads and stores. `body` must not call out.
struct FileLock<State>: ~Copyable, Sendable {
  private let mutex: Mutex<FileLockBox<State>>
  private let handoff = Atomic<UInt8>(0)

  init(_ state: State) { mutex = Mutex(FileLockBox(state: state)) }

  /// Runs `body` with exclusive access to the state.
  func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
    try mutex.withLock { box in
      _ = handoff.load(ordering: .acquiring)
      defer { handoff.store(0, ordering: .releasing) }
      return try FileLockCarry(value: body(&box.state))
    }.value
  }
}

// @unchecked: `state` is only reached inside `FileLock.withLock`, under its mutex.
struct FileLockBox<State>: @unchecked Sendable { var state: State }

// @unchecked: carries a result out of `FileLock.withLock`; the file strategy only returns
// Sendable values or values it hands to one thread.
struct FileLockCarry<T>: @unchecked Sendable { let value: T }
