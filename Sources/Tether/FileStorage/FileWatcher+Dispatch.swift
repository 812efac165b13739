import Streams
import TetherSupport

#if canImport(Darwin)
import Darwin
import Dispatch
import Synchronization

/// The Apple-platform ``FileWatcherBackend``: Dispatch file-system-object sources on the
/// file's directory (entries added, removed or renamed) and on the file itself (in-place
/// writes), or on the nearest existing ancestor while the directory is missing.
///
/// Every source is created, replaced and cancelled on the backend's serial queue.
final class DispatchBackend: FileWatcherBackend, Sendable {
  /// The sources of one registration.
  ///
  /// `@unchecked Sendable`: `list` is only read and written on `DispatchBackend.queue`
  /// (a serial queue, which serializes access as a lock would).
  private final class Sources: @unchecked Sendable {
    var list: [any DispatchSourceFileSystemObject] = []

    func cancelAll() {
      list.forEach { $0.cancel() }
      list = []
    }
  }

  private struct Registration: Sendable {
    let components: [String]
    let name: String
    let handler: @Sendable (FileWatcher.Change) -> Void
    let sources = Sources()
  }

  private let registrations = Lock([UInt64: Registration]())
  private let queue = DispatchQueue(label: "tether.file-watcher")

  func add(
    id: UInt64, directory: String, name: String,
    handler: @escaping @Sendable (FileWatcher.Change) -> Void
  ) {
    let components = directory.split(separator: "/").map(String.init)
    registrations.withLock {
      $0[id] = Registration(components: components, name: name, handler: handler)
    }
    queue.async { self.arm(id) }
  }

  func remove(id: UInt64) {
    guard let registration = registrations.withLock({ $0.removeValue(forKey: id) }) else {
      return
    }
    queue.async { registration.sources.cancelAll() }
  }

  /// Replaces the registration's sources with ones on the deepest existing directory and,
  /// when that is the file's directory, on the file. Runs on `queue`.
  private func arm(_ id: UInt64) {
    guard let registration = registrations.withLock({ $0[id] }) else { return }
    registration.sources.cancelAll()
    let handler = registration.handler
    let components = registration.components
    func path(_ depth: Int) -> String { "/" + components.prefix(depth).joined(separator: "/") }
    var depth = components.count
    var directory: Int32 = -1
    while depth >= 0 {
      directory = open(path(depth), O_EVTONLY | O_DIRECTORY | O_CLOEXEC)
      if directory >= 0 { break }
      depth -= 1
    }
    guard directory >= 0 else { return }
    registration.sources.list.append(
      makeSource(directory, events: [.write, .delete, .rename]) { [weak self] in
        // Entries changed (or the directory went away): the file may have been created,
        // replaced or removed, so watch afresh, then let the owner look.
        self?.arm(id)
        handler(.unknown)
      })
    if depth == registration.components.count {
      let path = "/" + (registration.components + [registration.name]).joined(separator: "/")
      let file = open(path, O_EVTONLY | O_CLOEXEC)
      if file >= 0 {
        registration.sources.list.append(
          makeSource(file, events: [.write, .extend, .delete, .rename]) {
            handler(.unknown)
          })
      }
    } else if access(path(depth + 1), F_OK) == 0 {
      // The next level appeared between the failed open and the source above taking effect,
      // so its creation sends no event: go deeper now and let the owner look.
      arm(id)
      handler(.unknown)
    }
  }

  private func makeSource(
    _ descriptor: Int32, events: DispatchSource.FileSystemEvent,
    handler: @escaping @Sendable () -> Void
  ) -> any DispatchSourceFileSystemObject {
    let source = DispatchSource.makeFileSystemObjectSource(
      fileDescriptor: descriptor, eventMask: events, queue: queue)
    source.setEventHandler(handler: handler)
    source.setCancelHandler { close(descriptor) }
    source.resume()
    return source
  }
}
#endif
