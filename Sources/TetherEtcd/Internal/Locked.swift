import Synchronization

/// The module's one lock: a `Synchronization.Mutex` whose critical sections ThreadSanitizer can
/// see.
///
/// Workaround: on Linux the contended path of `Mutex` (futex calls inside the uninstrumented
/// Swift runtime) gives TSan no happens-before edge between two critical sections, so it reports
/// false races on the state the mutex protects. An acquiring load at the start and a releasing
/// increment at the end of each section, on an instrumented atomic, give TSan the ordering the
/// mutex already guarantees (the same device as Streams' internal `Locked`).
struct Locked<State: ~Copyable>: ~Copyable, Sendable {
  private let mutex: Mutex<State>
  private let edge = Atomic<Int>(0)

  init(_ initial: consuming sending State) {
    mutex = Mutex(initial)
  }

  /// Runs `body` with exclusive access to the state. `body` never calls out.
  borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending State) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    try mutex.withLock { (state: inout sending State) throws(E) -> sending Result in
      _ = edge.load(ordering: .acquiring)
      defer { edge.wrappingAdd(1, ordering: .releasing) }
      return try body(&state)
    }
  }
}
