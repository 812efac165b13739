#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a write to a socket whose peer has gone from killing the process with `SIGPIPE`.
///
/// OpenSSL's socket BIO writes with `write(2)`, not `send(2)` with `MSG_NOSIGNAL` as the plain
/// http connection does, and Linux has no `SO_NOSIGPIPE`. So around each OpenSSL call that may
/// write, `SIGPIPE` is blocked for the calling thread only; a `SIGPIPE` raised meanwhile is
/// taken from the thread's pending set before the old mask comes back (the way libpq does
/// it). The write itself then fails with `EPIPE`, which the session reports. The process's
/// signal handling is never changed.
///
/// Where the platform has `SO_NOSIGPIPE` (Apple's), the socket carries it and this does
/// nothing.
enum SIGPIPEGuard {
  /// Runs `body` with `SIGPIPE` blocked on this thread.
  @inline(__always)
  static func run<Result>(_ body: () -> Result) -> Result {
    #if os(Linux)
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
    // A SIGPIPE pending before we started is not ours to take.
    var pendingBefore = sigset_t()
    sigpending(&pendingBefore)
    let wasPending = sigismember(&pendingBefore, SIGPIPE) == 1
    let result = body()
    if !wasPending {
      var pendingAfter = sigset_t()
      sigpending(&pendingAfter)
      if sigismember(&pendingAfter, SIGPIPE) == 1 {
        var zero = timespec(tv_sec: 0, tv_nsec: 0)
        let savedErrno = errno
        _ = sigtimedwait(&pipeOnly, nil, &zero)
        errno = savedErrno
      }
    }
    if sigismember(&previous, SIGPIPE) != 1 {
      pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
    return result
    #else
    return body()
    #endif
  }
}
