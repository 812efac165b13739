import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches one file for changes without polling: inotify on Linux, a Dispatch file-system
/// source on Apple platforms. It watches the file's directory, so an atomic replace (write a
/// temporary file, rename it over) and a Kubernetes config map update (a `..data` symlink
/// swap) are seen as well as an in-place edit.
///
/// (Tether's own file watcher is internal to the `Tether` module, so this module keeps its own
/// small one.)
final class ConfigFileWatcher: Sendable {
  private let stop: @Sendable () -> Void

  /// Starts watching; `onChange` runs on a background thread after each change.
  init?(url: URL, onChange: @escaping @Sendable () -> Void) {
    guard let stop = Self.start(url: url, onChange: onChange) else { return nil }
    self.stop = stop
  }

  func cancel() { stop() }

  deinit { stop() }

  #if canImport(Glibc) || canImport(Musl)
  private static func start(
    url: URL, onChange: @escaping @Sendable () -> Void
  ) -> (@Sendable () -> Void)? {
    let directory = url.deletingLastPathComponent().path
    let name = url.lastPathComponent
    let fd = inotify_init1(Int32(IN_CLOEXEC))
    guard fd >= 0 else { return nil }
    let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM)
    guard inotify_add_watch(fd, directory, mask) >= 0 else {
      close(fd)
      return nil
    }
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else {
      close(fd)
      return nil
    }
    // Not inherited by processes the app spawns.
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    let (wakeRead, wakeWrite) = (pipeEnds[0], pipeEnds[1])
    let thread = Thread {
      var buffer = [UInt8](repeating: 0, count: 64 * 1024)
      var fds = [
        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
      ]
      while true {
        fds[0].revents = 0
        fds[1].revents = 0
        guard poll(&fds, 2, -1) >= 0 || errno == EINTR else { break }
        if fds[1].revents != 0 { break }
        guard fds[0].revents != 0 else { continue }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { continue }
        if Self.mentions(name, in: buffer, count: count) { onChange() }
      }
      close(fd)
      close(wakeRead)
    }
    thread.name = "tether.config-file-watcher"
    thread.start()
    let stopped = Atomic<Bool>(false)
    return {
      guard !stopped.exchange(true, ordering: .relaxed) else { return }
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
      close(wakeWrite)
    }
  }

  /// Whether a batch of inotify events names the file (or a `..`-prefixed config map entry).
  private static func mentions(_ name: String, in buffer: [UInt8], count: Int) -> Bool {
    var offset = 0
    let headerSize = MemoryLayout<inotify_event>.size
    while offset + headerSize <= count {
      let length = buffer.withUnsafeBytes {
        Int($0.loadUnaligned(fromByteOffset: offset, as: inotify_event.self).len)
      }
      let nameBytes = buffer[(offset + headerSize)..<min(count, offset + headerSize + length)]
      let eventName = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
      if eventName == name || eventName.hasPrefix("..") { return true }
      offset += headerSize + length
    }
    return false
  }
  #else
  private static func start(
    url: URL, onChange: @escaping @Sendable () -> Void
  ) -> (@Sendable () -> Void)? {
    let fd = open(url.deletingLastPathComponent().path, O_EVTONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    let source = DispatchSource.makeFileSystemObjectSource(
      fileDescriptor: fd, eventMask: [.write, .rename, .delete, .link],
      queue: DispatchQueue(label: "tether.config-file-watcher"))
    source.setEventHandler { onChange() }
    source.setCancelHandler { close(fd) }
    source.resume()
    return { source.cancel() }
  }
  #endif
}
