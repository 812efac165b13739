import Synchronization

/// A `Mutex` whose ordering ThreadSanitizer can see.
///
/// On Linux a contended `Mutex` is handed over inside the kernel (a priority-inheriting
/// futex), invisible to TSan, which then reports false races on the protected state. An
/// acquiring load after locking and a releasing store before unlocking restore the edge
/// (the library's internal `Locked` does the same).
final class Guarded<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>
  private let edge = Atomic<UInt8>(0)

  init(_ value: Value) { mutex = Mutex(value) }

  func withLock<R: Sendable>(_ body: (inout sending Value) -> R) -> R {
    mutex.withLock { value in
      _ = edge.load(ordering: .acquiring)
      defer { edge.store(0, ordering: .releasing) }
      return body(&value)
    }
  }
}
