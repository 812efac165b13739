#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The identity of the calling thread, as a non-zero word (`pthread_self`).
///
/// A reference records it while a `withLock` body runs, so it can tell its own body touching
/// the value (a misuse it reports) from another thread waiting for the lock.
@usableFromInline
enum ThreadIdentity {
  @inlinable static var current: UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
  }
}
