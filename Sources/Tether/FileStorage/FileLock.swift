import Foundation
import Streams
import Synchronization
import TetherSupport

/// The exclusive advisory lock (`flock`) on a file's sidecar `.NAME.tether-lock`, which every
/// write of a file key takes, in every process.
///
/// The kernel releases the lock when its holder dies, so a crashed process never blocks the
/// others. The lock file is never deleted: a process that deleted it while another waited for
/// it would let a third lock a new file. If it was deleted or replaced anyway, the lock taken
/// on the old one is dropped and taken again on the new one.
///
/// The lock file stays open while its ``FileStorage`` lives. It is used on the storage's queue
/// only, or on a thread running inside `queue.sync`: never by two threads at once.
final class FileLock: Sendable {
  /// How taking the lock ended.
  enum Outcome<T> {
    /// The lock was held while the body ran; its result.
    case locked(T)
    /// Another holder has the lock, and the caller asked not to wait.
    case busy
    /// The lock file could not be opened or locked (`errno`).
    case failed(errno: Int32)
  }

  /// The open lock file. (A lock, though never contended, so ThreadSanitizer sees the hand-off
  /// between the queue's threads.)
  private let descriptor = Lock<Int32?>(nil)

  /// Runs `body` holding the lock on `lockPath`. With `waiting`, waits for another holder to
  /// release it (possibly for long: only on the storage's queue); without, returns `busy` at
  /// once instead.
  func withLock<T>(at lockPath: String, waiting: Bool, _ body: () -> T) -> Outcome<T> {
    for _ in 0..<100 {
      var file = descriptor.withLock { $0 } ?? -1
      if file < 0 {
        file = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        // A lock file another user created read-only still locks: flock needs no write access.
        if file < 0 && errno == EACCES { file = open(lockPath, O_RDONLY | O_CLOEXEC) }
        guard file >= 0 else { return .failed(errno: errno) }
        descriptor.withLock { $0 = file }
      }
      while flock(file, waiting ? LOCK_EX : LOCK_EX | LOCK_NB) != 0 {
        if !waiting && errno == EWOULDBLOCK { return .busy }
        guard errno == EINTR else { return .failed(errno: errno) }
      }
      var locked = Foundation.stat()
      var named = Foundation.stat()
      if fstat(file, &locked) == 0, stat(lockPath, &named) == 0,
        locked.st_ino == named.st_ino, locked.st_dev == named.st_dev
      {
        defer { flock(file, LOCK_UN) }
        return .locked(body())
      }
      // The lock file was deleted or replaced since it was opened: lock the one there now.
      close(file)
      descriptor.withLock { $0 = nil }
    }
    return .failed(errno: EAGAIN)
  }

  deinit {
    if let file = descriptor.withLock({ $0 }) { close(file) }
  }
}
