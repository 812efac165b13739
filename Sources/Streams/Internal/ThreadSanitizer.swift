import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Makes `Synchronization.Mutex` visible to ThreadSanitizer on Linux.
///
/// On Linux, `Mutex` locks with futex system calls inside the Swift runtime, which is not
/// instrumented, so `swift test --sanitize=thread` sees no happens-before edge between two
/// critical sections and reports every access to the guarded state as a race. A lock user
/// calls ``acquire(_:)`` as the first thing inside `withLock` and ``release(_:)`` on the way
/// out, both with the mutex's address; TSan then orders the sections as it does for a pthread
/// mutex. The annotations are found at run time (`__tsan_acquire`/`__tsan_release` exist only
/// in sanitized builds), so an ordinary build pays one predictable branch. On Apple platforms
/// `Mutex` is an `os_unfair_lock`, which TSan already understands, and these do nothing.
@usableFromInline
enum ThreadSanitizer {
  @usableFromInline typealias Annotation = @convention(c) (UnsafeRawPointer?) -> Void

  #if canImport(Glibc) || canImport(Musl)
  @usableFromInline static let acquireAnnotation = lookUp("__tsan_acquire")
  @usableFromInline static let releaseAnnotation = lookUp("__tsan_release")

  private static func lookUp(_ name: String) -> Annotation? {
    // A null handle is RTLD_DEFAULT: search every loaded object.
    guard let symbol = dlsym(nil, name) else { return nil }
    return unsafeBitCast(symbol, to: Annotation.self)
  }
  #else
  @usableFromInline static let acquireAnnotation: Annotation? = nil
  @usableFromInline static let releaseAnnotation: Annotation? = nil
  #endif

  /// Records that the lock at `address` was just acquired.
  @inlinable
  static func acquire(_ address: UnsafeRawPointer) {
    acquireAnnotation?(address)
  }

  /// Records that the lock at `address` is about to be released.
  @inlinable
  static func release(_ address: UnsafeRawPointer) {
    releaseAnnotation?(address)
  }
}

extension Mutex where Value: ~Copyable {
  /// `withLock`, with the critical section announced to ThreadSanitizer (see
  /// ``ThreadSanitizer``). Use it for every lock in the module so that
  /// `swift test --sanitize=thread` reports real races only.
  @inlinable
  func withAnnotatedLock<Result, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    try withLock { (value: inout sending Value) throws(E) -> sending Result in
      let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
      ThreadSanitizer.acquire(address)
      defer { ThreadSanitizer.release(address) }
      return try body(&value)
    }
  }
}
