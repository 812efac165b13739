import Streams
import TetherSupport

#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Dispatch
import Foundation
import Synchronization

/// The Linux ``FileWatcherBackend``: one inotify instance for every watched file, read by a
/// thread of its own that sleeps in `poll` until events arrive.
///
/// A thread rather than a Dispatch read source: a source's event costs three thread wake-ups
/// (Dispatch's event thread, a worker for the handler, the event thread again to re-arm), and
/// every write to a watched directory — including each temporary file a file key writes —
/// produces events. The thread is woken once per batch.
///
/// inotify watches directories here, never files: an atomic replace swaps the directory
/// entry, which a watch on the old file's inode would miss. Watches on one directory share
/// one watch descriptor (inotify returns the same one for the same inode), so every watch
/// uses the same mask.
final class InotifyBackend: FileWatcherBackend, Sendable {
  private struct Registration {
    /// The directory that should hold the file, as components from the root.
    let components: [String]
    /// The file's name.
    let name: String
    let handler: @Sendable (FileWatcher.Change) -> Void
    /// The watch descriptor of the directory currently watched: the file's directory or,
    /// while that is missing, its nearest existing ancestor.
    var descriptor: Int32 = -1
    /// How many components of `components` the watched directory has.
    var depth = 0

    /// The entry name in the watched directory this registration cares about.
    var awaitedName: String { depth == components.count ? name : components[depth] }
    var isArmedAtTarget: Bool { depth == components.count }
    /// Whether the system refused the watch, so the fallback timer checks for it.
    var isPolling = false
    /// Whether the refusal was reported (once per registration).
    var reportedRefusal = false
  }

  private struct State {
    var registrations: [UInt64: Registration] = [:]
    var registrationsByDescriptor: [Int32: Set<UInt64>] = [:]
    /// Runs every `FileWatcher.fallbackInterval` while a registration is polling.
    var fallbackTimer: (any DispatchSourceTimer)?
  }

  private typealias Deliveries = [(@Sendable (FileWatcher.Change) -> Void, FileWatcher.Change)]

  private static let mask: UInt32 =
    UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM) | UInt32(IN_CREATE)
    | UInt32(IN_DELETE) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_ONLYDIR)

  private let descriptor: Int32
  /// Why `inotify_init1` failed, when it did (every watch then falls back to checking).
  private let initError: Int32
  private let state = Lock(State())
  /// Runs the fallback timer.
  private let queue = DispatchQueue(label: "tether.file-watcher")
  /// The write end of a pipe whose closing tells the reading thread to stop (when the backend
  /// goes away).
  private let stopDescriptor: Int32

  /// Called, in tests only, with the path of a missing directory just before the backend
  /// falls back to watching its parent: the moment a racing `mkdir` could slip through.
  private let afterMissingDirectory: (@Sendable (String) -> Void)?

  /// Creates the backend. `afterMissingDirectory` lets a test create a directory at the
  /// worst possible moment; production code passes nothing.
  init(afterMissingDirectory: (@Sendable (String) -> Void)? = nil) {
    self.afterMissingDirectory = afterMissingDirectory
    descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    initError = descriptor < 0 ? errno : 0
    var stopPipe: [Int32] = [-1, -1]
    if descriptor >= 0 {
      if pipe(&stopPipe) == 0 {
        _ = fcntl(stopPipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(stopPipe[1], F_SETFD, FD_CLOEXEC)
      } else {
        stopPipe = [-1, -1]
      }
    }
    stopDescriptor = stopPipe[1]
    guard descriptor >= 0 else { return }
    // Without the pipe, the thread stops at the first event after the backend went away.
    startReading(stop: stopPipe[0])
  }

  /// Starts the thread that reads events until `stop` (the pipe's read end) reports that the
  /// write end was closed, then closes both descriptors (it is their last user).
  private func startReading(stop: Int32) {
    let events = descriptor
    let thread = Thread { [weak self] in
      var descriptors = [
        pollfd(fd: events, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
      ]
      defer {
        close(events)
        if stop >= 0 { close(stop) }
      }
      while true {
        let ready = poll(&descriptors, nfds_t(stop >= 0 ? 2 : 1), -1)
        if ready < 0 {
          if errno == EINTR { continue }
          return
        }
        if stop >= 0, descriptors[1].revents != 0 { return }
        guard descriptors[0].revents & Int16(POLLIN) != 0, let backend = self else {
          if descriptors[0].revents != 0 { return }  // POLLERR/POLLNVAL: nothing more comes.
          continue
        }
        backend.readEvents()
      }
    }
    thread.name = "tether.file-watcher"
    thread.start()
  }

  deinit {
    state.withLock { $0.fallbackTimer?.cancel() }
    if stopDescriptor >= 0 { close(stopDescriptor) }
  }

  func add(
    id: UInt64, directory: String, name: String,
    handler: @escaping @Sendable (FileWatcher.Change) -> Void
  ) {
    let components = directory.split(separator: "/").map(String.init)
    let deliveries = state.withLock { state -> Deliveries in
      state.registrations[id] = Registration(
        components: components, name: name, handler: handler)
      var deliveries: Deliveries = []
      arm(id, in: &state, into: &deliveries)
      return deliveries
    }
    for (handler, change) in deliveries { handler(change) }
  }

  func remove(id: UInt64) {
    state.withLock { state in
      guard let registration = state.registrations.removeValue(forKey: id) else { return }
      detach(id, from: registration.descriptor, in: &state)
    }
  }

  /// Watches the deepest existing directory on the registration's path.
  ///
  /// A directory can appear between the failed attempt to watch it and the watch on its
  /// parent taking effect; its creation event then never arrives. So once a watch on an
  /// ancestor is in place, the next level is tried again, and the backend goes deeper for as
  /// long as it finds one.
  ///
  /// When the system refuses a watch for another reason than a missing directory (`ENOSPC`
  /// at the watch limit, `ENOMEM`, `EACCES`), the registration falls back to the timer, which
  /// reports `unknown` and tries again every `FileWatcher.fallbackInterval`; the first refusal
  /// is reported to its handler as `unwatchable`.
  private func arm(_ id: UInt64, in state: inout State, into deliveries: inout Deliveries) {
    guard var registration = state.registrations[id] else { return }
    let components = registration.components
    func path(_ depth: Int) -> String { "/" + components.prefix(depth).joined(separator: "/") }
    var depth = components.count
    var watch: Int32 = -1
    var refusal: Int32? = descriptor < 0 ? initError : nil
    while refusal == nil {
      watch = addWatch(path(depth))
      if watch < 0 {
        let code = errno
        guard code == ENOENT || code == ENOTDIR, depth > 0 else {
          refusal = code
          break
        }
        afterMissingDirectory?(path(depth))
        depth -= 1
        continue
      }
      guard depth < components.count else { break }
      let deeper = addWatch(path(depth + 1))
      guard deeper >= 0 else { break }
      // The next level appeared meanwhile: keep its watch, and drop the ancestor's unless
      // another registration uses it.
      if watch != registration.descriptor, state.registrationsByDescriptor[watch] == nil {
        inotify_rm_watch(descriptor, watch)
      }
      watch = deeper
      depth += 1
      if depth == components.count { break }
    }
    if let refusal {
      detach(id, from: registration.descriptor, in: &state)
      registration.descriptor = -1
      registration.isPolling = true
      if !registration.reportedRefusal {
        registration.reportedRefusal = true
        deliveries.append((registration.handler, .unwatchable(errno: refusal)))
      }
      state.registrations[id] = registration
      startFallbackTimer(in: &state)
      return
    }
    if watch != registration.descriptor {
      detach(id, from: registration.descriptor, in: &state)
      if watch >= 0 { state.registrationsByDescriptor[watch, default: []].insert(id) }
    }
    registration.descriptor = watch
    registration.depth = depth
    registration.isPolling = false
    state.registrations[id] = registration
  }

  /// `inotify_add_watch`, unless a test injects a refusal for `path`.
  private func addWatch(_ path: String) -> Int32 {
    if let code = InotifyFaultInjection.refusal(for: path) {
      errno = code
      return -1
    }
    return inotify_add_watch(descriptor, path, Self.mask)
  }

  private func startFallbackTimer(in state: inout State) {
    guard state.fallbackTimer == nil else { return }
    let timer = DispatchSource.makeTimerSource(queue: queue)
    let interval = FileWatcher.fallbackInterval
    let nanoseconds = Int(interval.components.seconds) * 1_000_000_000
    timer.schedule(
      deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
    timer.setEventHandler { [weak self] in self?.checkRefusedWatches() }
    timer.resume()
    state.fallbackTimer = timer
  }

  /// The fallback timer's tick: tries again to watch each refused registration and tells it to
  /// look at its file; stops the timer once the system accepts every watch.
  private func checkRefusedWatches() {
    let deliveries = state.withLock { state -> Deliveries in
      var deliveries: Deliveries = []
      for (id, registration) in state.registrations where registration.isPolling {
        arm(id, in: &state, into: &deliveries)
        deliveries.append((registration.handler, .unknown))
      }
      if !state.registrations.values.contains(where: \.isPolling) {
        state.fallbackTimer?.cancel()
        state.fallbackTimer = nil
      }
      return deliveries
    }
    for (handler, change) in deliveries { handler(change) }
  }

  private func detach(_ id: UInt64, from watch: Int32, in state: inout State) {
    guard watch >= 0, var ids = state.registrationsByDescriptor[watch] else { return }
    ids.remove(id)
    if ids.isEmpty {
      state.registrationsByDescriptor[watch] = nil
      inotify_rm_watch(descriptor, watch)
    } else {
      state.registrationsByDescriptor[watch] = ids
    }
  }

  private func readEvents() {
    let capacity = 64 * 1024
    let buffer = UnsafeMutableRawPointer.allocate(
      byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
    defer { buffer.deallocate() }
    while true {
      let count = read(descriptor, buffer, capacity)
      guard count > 0 else { return }
      var deliveries: Deliveries = []
      state.withLock { state in
        var offset = 0
        while offset + MemoryLayout<inotify_event>.size <= count {
          let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
          let nameStart = offset + MemoryLayout<inotify_event>.size
          let name =
            event.len == 0
            ? ""
            : String(cString: buffer.advanced(by: nameStart).assumingMemoryBound(to: CChar.self))
          offset = nameStart + Int(event.len)
          route(event, name: name, in: &state, into: &deliveries)
        }
      }
      for (handler, change) in deliveries { handler(change) }
    }
  }

  private func route(
    _ event: inotify_event, name: String, in state: inout State,
    into deliveries: inout Deliveries
  ) {
    let mask = event.mask
    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
      // Events were lost: every watch must look again.
      for id in Array(state.registrations.keys) {
        arm(id, in: &state, into: &deliveries)
        if let registration = state.registrations[id] {
          deliveries.append((registration.handler, .unknown))
        }
      }
      return
    }
    guard let ids = state.registrationsByDescriptor[event.wd] else { return }
    let directoryGone =
      mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF) | UInt32(IN_IGNORED)) != 0
    if mask & UInt32(IN_IGNORED) != 0 {
      // The kernel dropped the watch (its directory is gone); the descriptor may be reused.
      state.registrationsByDescriptor[event.wd] = nil
      for id in ids { state.registrations[id]?.descriptor = -1 }
    }
    for id in ids {
      guard let registration = state.registrations[id] else { continue }
      if directoryGone {
        // Re-arm on whatever is there now: the directory may already be back, holding the
        // file again, in which case only a fresh look can tell what is there.
        arm(id, in: &state, into: &deliveries)
        let rearmedAtTarget = state.registrations[id]?.isArmedAtTarget ?? false
        deliveries.append((registration.handler, rearmedAtTarget ? .unknown : .removed))
        continue
      }
      guard name == registration.awaitedName else { continue }
      if registration.isArmedAtTarget {
        deliveries.append((registration.handler, Self.change(for: mask)))
      } else if mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
        // A directory on the path appeared: watch deeper. The file may already be there.
        arm(id, in: &state, into: &deliveries)
        deliveries.append((registration.handler, .unknown))
      }
    }
  }

  private static func change(for mask: UInt32) -> FileWatcher.Change {
    if mask & UInt32(IN_MOVED_TO) != 0 { return .replaced }
    if mask & UInt32(IN_CLOSE_WRITE) != 0 { return .written }
    if mask & UInt32(IN_CREATE) != 0 { return .created }
    if mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 { return .removed }
    return .unknown
  }
}

/// Fault injection for tests: makes the inotify backend's watches on directories under a path
/// fail as if the system refused them (for example `ENOSPC`, the watch limit), which a test
/// cannot make the real kernel do on demand without starving every other test of watches.
/// Production code never sets it.
enum InotifyFaultInjection {
  private static let refusals = Lock<[String: Int32]>([:])

  /// From now on, watching `directory` or anything under it fails with `code`.
  static func refuseWatches(under directory: String, errno code: Int32) {
    refusals.withLock { $0[directory] = code }
  }

  /// Watches under `directory` succeed again.
  static func stopRefusingWatches(under directory: String) {
    refusals.withLock { $0[directory] = nil }
  }

  /// The injected refusal for a watch on `path`, if any.
  static func refusal(for path: String) -> Int32? {
    refusals.withLock { refusals in
      guard !refusals.isEmpty else { return nil }
      return refusals.first { path == $0.key || path.hasPrefix($0.key + "/") }?.value
    }
  }
}
#endif
