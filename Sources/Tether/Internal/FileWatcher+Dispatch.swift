#if canImport(Darwin)
import Darwin
import Dispatch
import Synchronization

/// The Apple-platform ``FileWatcherBackend``: Dispatch file-system-object sources on the
/// file's directory (entries added, removed or renamed) and on the file itself (in-place
/// writes), or on the nearest existing ancestor while the directory is missing.
final class DispatchBackend: FileWatcherBackend, Sendable {
  private struct Registration {
    let components: [String]
    let name: String
    let handler: @Sendable (FileWatcher.Change) -> Void
    var sources: [any DispatchSourceFileSystemObject] = []
  }

  private let state = Mutex([UInt64: Registration]())
  private let queue = DispatchQueue(label: "tether.file-watcher")

  func add(
    id: UInt64, directory: String, name: String,
    handler: @escaping @Sendable (FileWatcher.Change) -> Void
  ) {
    let components = directory.split(separator: "/").map(String.init)
    state.withLock { registrations in
      registrations[id] = Registration(components: components, name: name, handler: handler)
    }
    queue.async { self.arm(id) }
  }

  func remove(id: UInt64) {
    let registration = state.withLock { $0.removeValue(forKey: id) }
    registration?.sources.forEach { $0.cancel() }
  }

  /// Replaces the registration's sources with ones on the deepest existing directory and,
  /// when that is the file's directory, on the file. Runs on `queue`.
  private func arm(_ id: UInt64) {
    guard let registration = state.withLock({ $0[id] }) else { return }
    registration.sources.forEach { $0.cancel() }
    var sources: [any DispatchSourceFileSystemObject] = []
    var depth = registration.components.count
    var directory = -1 as Int32
    while depth >= 0 {
      let path = "/" + registration.components.prefix(depth).joined(separator: "/")
      directory = open(path, O_EVTONLY | O_DIRECTORY)
      if directory >= 0 { break }
      depth -= 1
    }
    if directory >= 0 {
      sources.append(
        makeSource(directory, events: [.write, .delete, .rename]) { [weak self] _ in
          // Entries changed (or the directory went away): the file may have been created,
          // replaced or removed, so watch afresh, then let the owner look.
          self?.arm(id)
          registration.handler(.unknown)
        })
      if depth == registration.components.count {
        let path = "/" + (registration.components + [registration.name]).joined(separator: "/")
        let file = open(path, O_EVTONLY)
        if file >= 0 {
          sources.append(
            makeSource(file, events: [.write, .extend, .delete, .rename]) { _ in
              registration.handler(.unknown)
            })
        }
      }
    }
    let stale = state.withLock { registrations -> [any DispatchSourceFileSystemObject] in
      guard registrations[id] != nil else { return sources }
      registrations[id]?.sources = sources
      return []
    }
    stale.forEach { $0.cancel() }
  }

  private func makeSource(
    _ descriptor: Int32, events: DispatchSource.FileSystemEvent,
    handler: @escaping @Sendable (DispatchSource.FileSystemEvent) -> Void
  ) -> any DispatchSourceFileSystemObject {
    let source = DispatchSource.makeFileSystemObjectSource(
      fileDescriptor: descriptor, eventMask: events, queue: queue)
    source.setEventHandler { [weak source] in
      guard let source else { return }
      handler(source.data)
    }
    source.setCancelHandler { close(descriptor) }
    source.resume()
    return source
  }
}
#endif
