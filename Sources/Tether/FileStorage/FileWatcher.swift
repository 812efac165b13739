import Foundation
import Synchronization

/// Watches files for changes made by anyone: this process, another process, an editor.
///
/// A watch names a file that may not exist yet, in a directory that may not exist yet. The
/// watcher observes the file's directory (so an atomic replace, which swaps the directory
/// entry, is seen as well as an in-place write) or, while the directory is missing, its
/// nearest existing ancestor, re-arming as directories appear and disappear. Nothing polls
/// while the system accepts the watches.
///
/// Handlers run on the watcher's own serial queue, one event at a time, and must return
/// quickly; they are never called while the watcher holds its lock. The platform mechanism
/// lives behind ``FileWatcherBackend``: inotify on Linux, Dispatch file-system sources on
/// Apple platforms. When the system refuses a watch (the inotify watch limit), the watch falls
/// back to checking every ``fallbackInterval`` and says so once (`unwatchable`): it never goes
/// silently stale.
///
/// `package`: Tether's one file watcher; other modules (remote config's file source) watch
/// through it too.
package final class FileWatcher: Sendable {
  /// What happened to a watched file, as precisely as the platform can tell.
  package enum Change: Sendable, Equatable {
    /// The file was closed after being written in place. On Linux this is also reported when
    /// a process that got a copy of a descriptor of the file (one spawned while the file was
    /// open) closes it, so it means "look again", not "a new version".
    case written
    /// Another file was renamed over it: an atomic replace, one new version.
    case replaced
    /// The file was created; a `written` usually follows.
    case created
    /// The file was deleted or renamed away.
    case removed
    /// Something changed that may concern the file (a directory on its path appeared or
    /// vanished, events were lost, or the platform cannot tell more): look again.
    case unknown
    /// The system refused to watch the file (`errno`; `ENOSPC` when the inotify watch limit is
    /// reached). Until a watch succeeds the watcher checks instead: it reports `unknown` every
    /// ``FileWatcher/fallbackInterval`` and tries to watch again. Reported once per watch.
    case unwatchable(errno: Int32)
  }

  /// How often a file the system refused to watch is looked at instead: one second, so a
  /// change arrives at most about a second late, for the cost of one `stat` per second.
  static let fallbackInterval = Duration.seconds(1)

  /// The watcher every module shares: one kernel instance for every watched file.
  package static let shared = FileWatcher()

  private let backend: any FileWatcherBackend
  private let nextID = Atomic<UInt64>(0)

  init() {
    #if canImport(Glibc) || canImport(Musl)
    backend = InotifyBackend()
    #else
    backend = DispatchBackend()
    #endif
  }

  /// Creates a watcher over a given backend (tests use this to inject a race).
  init(backend: any FileWatcherBackend) {
    self.backend = backend
  }

  /// Starts watching the file at `path` (an absolute, standardized path) and calls `handler`
  /// for each change until the returned token is cancelled or released.
  package func watch(_ path: String, handler: @escaping @Sendable (Change) -> Void) -> CancelOnce {
    let id = nextID.add(1, ordering: .relaxed).newValue
    let url = URL(fileURLWithPath: path, isDirectory: false)
    backend.add(
      id: id, directory: url.deletingLastPathComponent().path, name: url.lastPathComponent,
      handler: handler)
    return CancelOnce { [backend] in backend.remove(id: id) }
  }
}

/// The platform half of ``FileWatcher``.
protocol FileWatcherBackend: Sendable {
  /// Starts watching `name` inside `directory`, reporting changes to `handler`.
  func add(
    id: UInt64, directory: String, name: String,
    handler: @escaping @Sendable (FileWatcher.Change) -> Void)
  /// Stops the watch `id`. No event read after this returns reaches its handler (one that is
  /// being delivered at this moment may still finish).
  func remove(id: UInt64)
}
