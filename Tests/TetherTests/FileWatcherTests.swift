import Foundation
import TestSupport
import Testing

@testable import Tether

/// The internal `FileWatcher` on real files: what it reports, and that it follows
/// directories that appear and disappear.
@Suite struct FileWatcherTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-file") }

  @Test func reportsCreationInPlaceWritesAtomicReplacesAndDeletion() async throws {
    let url = directory.file("watched.json")
    let log = EventLog<FileWatcher.Change>()
    let watch = FileWatcher.shared.watch(url.path) { log.append($0) }
    defer { watch.cancel() }

    let descriptor = open(url.path, O_CREAT | O_WRONLY, 0o644)  // Created in place.
    #expect(descriptor >= 0)
    #expect(write(descriptor, "1", 1) == 1)
    close(descriptor)
    #expect(await log.wait(for: { $0 == .created }))
    #expect(await log.wait(for: { $0 == .written }))
    var seen = log.events.count
    try writeInPlace("2", to: url)
    #expect(await log.wait(from: seen, for: { $0 == .written }))
    seen = log.events.count
    try Data("3".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(from: seen, for: { $0 == .replaced }))
    seen = log.events.count
    try FileManager.default.removeItem(at: url)
    #expect(await log.wait(from: seen, for: { $0 == .removed }))
  }

  @Test func ignoresOtherFilesInTheDirectory() async throws {
    let log = EventLog<String>()
    let watch = FileWatcher.shared.watch(directory.file("a.json").path) { _ in log.append("a") }
    let fence = FileWatcher.shared.watch(directory.file("b.json").path) { _ in log.append("b") }
    defer {
      watch.cancel()
      fence.cancel()
    }
    try Data("1".utf8).write(to: directory.file("other.json"), options: .atomic)
    try Data("1".utf8).write(to: directory.file("b.json"), options: .atomic)
    #expect(await log.wait(for: { $0 == "b" }))
    #expect(!log.events.contains("a"))
  }

  // While the watcher re-arms (one directory level per event), a write can land before the
  // watch reaches the file's directory; the watcher then reports `unknown` once it gets there
  // (look again). So each phase checks that the file was noticed, and then that the watch
  // settled where it belongs: later replaces arrive as `replaced`.
  @Test func followsADirectoryThatAppearsLaterAndIsRemovedAndRecreated() async throws {
    let folder = directory.file("a/b")
    let url = folder.appendingPathComponent("watched.json")
    let log = EventLog<FileWatcher.Change>()
    let watch = FileWatcher.shared.watch(url.path) { log.append($0) }
    defer { watch.cancel() }

    var seen = log.events.count
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data("1".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(from: seen, for: { $0 == .replaced || $0 == .unknown }))
    #expect(await writeUntilSeenAsReplaced("2", to: url, log: log))

    seen = log.events.count
    try FileManager.default.removeItem(at: directory.file("a"))
    #expect(await log.wait(from: seen, for: { $0 == .removed }))

    seen = log.events.count
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data("3".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(from: seen, for: { $0 == .replaced || $0 == .unknown }))
    #expect(await writeUntilSeenAsReplaced("4", to: url, log: log))
  }

  #if canImport(Glibc) || canImport(Musl)
  // A real `mkdir` from another process can land between the backend's failed attempt to
  // watch a directory and its watch on the parent; the kernel then never reports it. A real
  // race hits that window about once in hundreds of runs, so a hook (a fault injection, not
  // a real part) creates the directory exactly there, every time.
  @Test func aDirectoryCreatedWhileTheWatchFallsBackToItsParentIsFollowed_injectedRace()
    async throws
  {
    let outer = directory.file("late")
    let inner = outer.appendingPathComponent("inner")
    let url = inner.appendingPathComponent("watched.json")
    let injections = EventLog<String>()
    let backend = InotifyBackend(afterMissingDirectory: { path in
      // Only once `late` exists can `late/inner` be created; do it once.
      guard path == inner.path, injections.events.isEmpty,
        (try? FileManager.default.createDirectory(at: inner, withIntermediateDirectories: false))
          != nil
      else { return }
      injections.append(path)
    })
    let watcher = FileWatcher(backend: backend)
    let log = EventLog<FileWatcher.Change>()
    let watch = watcher.watch(url.path) { log.append($0) }
    defer { watch.cancel() }

    try FileManager.default.createDirectory(at: outer, withIntermediateDirectories: false)
    #expect(await injections.wait(for: { $0 == inner.path }))
    #expect(await log.wait(for: { $0 == .unknown }))
    let seen = log.events.count
    try Data("1".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(from: seen, for: { $0 == .replaced }))
  }
  // Each backend reads on a thread of its own; one that goes away must stop it and close its
  // inotify descriptor, or a process that makes watchers (tests do) leaks both. Other tests
  // run meanwhile and may hold one backend of their own, hence the slack of one.
  @Test func aBackendThatGoesAwayStopsItsThreadAndClosesItsDescriptor() async throws {
    let before = (inotify: Self.openInotifyDescriptors(), threads: Self.watcherThreads())
    let url = directory.file("watched.json")
    for round in 0..<20 {
      let backend = InotifyBackend()
      let watcher = FileWatcher(backend: backend)
      let log = EventLog<FileWatcher.Change>()
      let watch = watcher.watch(url.path) { log.append($0) }
      let seen = log.events.count
      try Data("\(round)".utf8).write(to: url, options: .atomic)
      #expect(await log.wait(from: seen, for: { $0 == .replaced }), "round \(round)")
      watch.cancel()
    }
    try await waitUntil("the backends' threads stopped and closed their descriptors") {
      Self.openInotifyDescriptors() <= before.inotify + 1
        && Self.watcherThreads() <= before.threads + 1
    }
  }

  /// How many inotify instances this process has open.
  static func openInotifyDescriptors() -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.filter {
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
        == "anon_inode:inotify"
    }.count
  }

  /// How many of this process's threads are inotify readers (named `tether.file-watcher`,
  /// which the kernel cuts to 15 characters).
  static func watcherThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter {
      let name = try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
      return name?.hasPrefix("tether.file-wat") == true
    }.count
  }
  #endif

  /// Waits for the watch to settle: replaces the file until a write is reported as
  /// `replaced` (each attempt waits up to 200 ms), at most 50 times.
  private func writeUntilSeenAsReplaced(
    _ text: String, to url: URL, log: EventLog<FileWatcher.Change>
  ) async -> Bool {
    for _ in 0..<50 {
      let seen = log.events.count
      try? Data(text.utf8).write(to: url, options: .atomic)
      if await log.wait(from: seen, timeout: .milliseconds(200), for: { $0 == .replaced }) {
        return true
      }
    }
    return false
  }

  @Test func cancelledWatchHearsNothingMore() async throws {
    let log = EventLog<String>()
    let watch = FileWatcher.shared.watch(directory.file("a.json").path) { _ in log.append("a") }
    let fence = FileWatcher.shared.watch(directory.file("b.json").path) { _ in log.append("b") }
    defer { fence.cancel() }
    watch.cancel()
    try Data("1".utf8).write(to: directory.file("a.json"), options: .atomic)
    try Data("1".utf8).write(to: directory.file("b.json"), options: .atomic)
    #expect(await log.wait(for: { $0 == "b" }))
    #expect(!log.events.contains("a"))
  }
}
