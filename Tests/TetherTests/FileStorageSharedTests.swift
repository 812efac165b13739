import Foundation
import Streams
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// `@Shared(.fileStorage(…))` end to end: the property wrapper over the file key, on real
/// files, each test in its own isolated storage scope.
@Suite(.isolatedSharedState(files: .real)) struct FileStorageSharedTests {
  struct Settings: Codable, Equatable, Sendable {
    var theme = "light"
    var size = 12
  }

  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-file") }

  @Test func sharedStartsFromTheDefaultAndPersistsMutations() async throws {
    let url = directory.file("settings.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var settings = Settings()
      #expect(settings == Settings())
      #expect(try directory.contents() == [])
      $settings.withLock { $0.theme = "dark" }
      try await $settings.save()
      #expect(decodeFile(url, as: Settings.self) == Settings(theme: "dark", size: 12))
    }
    withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var settings = Settings()
      #expect(settings.theme == "dark")
    }
  }

  /// A holder that nobody else writes to makes each save conditional on the version its
  /// previous save wrote, however many came before (more than the storage and the engine
  /// remember): they must all go through, not turn into conflicts once the oldest is forgotten.
  @Test func manyOwnWritesOverTheLoadedVersionAreNoConflict() async throws {
    let url = directory.file("count.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url, throttle: .zero)) var count = 0
      let writes = FileVersions.limit * 4 + 44
      for _ in 0..<writes {
        $count.withLock { $0 += 1 }
      }
      try await waitUntil("every write on disk", timeout: .seconds(30)) {
        $count.saveError != nil || decodeFile(url, as: Int.self) == writes
      }
      #expect($count.saveError == nil)
      #expect(decodeFile(url, as: Int.self) == writes)
    }
  }

  @Test func keyCarryingItsDefaultLoadsAndSaves() async throws {
    let url = directory.file("launches.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(FileStorageKey<Int>.fileStorage(url)[default: 7]) var launches
      #expect(launches == 7)
      $launches.withLock { $0 += 1 }
      try await $launches.save()
      #expect(decodeFile(url, as: Int.self) == 8)
    }
  }

  @Test func pathsSpelledDifferentlyShareOneReference() throws {
    let base = directory.url.path
    withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(URL(fileURLWithPath: "\(base)/a/b.json"))) var first = 1
      @Shared(.fileStorage(URL(fileURLWithPath: "\(base)/a//b.json"))) var second = 2
      @Shared(.fileStorage(URL(fileURLWithPath: "\(base)/a/./b.json"))) var third = 3
      #expect(second == 1 && third == 1)
      $first.withLock { $0 = 10 }
      #expect(second == 10 && third == 10)
    }
  }

  @Test func externalChangesReachTheValueAndDeletionRestoresTheDefault() async throws {
    let url = directory.file("count.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var count = 0
      let seen = EventLog<Int>()
      let values = $count.values
      let task = Task { for await value in values { seen.append(value) } }
      defer { task.cancel() }
      try Data("5".utf8).write(to: url, options: .atomic)
      #expect(await seen.wait(for: { $0 == 5 }))
      #expect(count == 5)
      let seenBeforeDeletion = seen.events.count
      try FileManager.default.removeItem(at: url)
      #expect(await seen.wait(from: seenBeforeDeletion, for: { $0 == 0 }))
      #expect(count == 0)
    }
  }

  @Test func publisherEmitsExactlyOncePerMutationAndOwnWritesAreNotEchoed() async throws {
    let url = directory.file("count.json")
    try await withSharedStorage(.isolated(files: .real)) {
      // No throttle window: every mutation is written, so every write could echo.
      @Shared(.fileStorage(url, throttle: .zero)) var count = 0
      let emitted = EventLog<Int>()
      let cancellable = $count.publisher.sink { emitted.append($0) }
      defer { cancellable.cancel() }
      for _ in 1...5 { $count.withLock { $0 += 1 } }
      try await $count.save()
      #expect(decodeFile(url, as: Int.self) == 5)
      // An external write last: once it arrives, every echo would have arrived before it.
      try Data("99".utf8).write(to: url, options: .atomic)
      #expect(await emitted.wait(for: { $0 == 99 }))
      #expect(emitted.events == [0, 1, 2, 3, 4, 5, 99])
    }
  }

  /// Issue 32, defect 7: a `save()` after each mutation used to make the next mutation's
  /// throttled save look like a conflict (the unconditional write started a new run of
  /// versions that forgot the one the holders had), and the conflict handed the holders the
  /// file's older value: a subscriber saw `[0, 1, 2, 1, 3, 4, 3, 5, 100]`.
  @Test func mutationsEachFollowedBySaveNeverEchoNorGoBackwards() async throws {
    let url = directory.file("count.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url, throttle: .zero)) var count = 0
      let emitted = EventLog<Int>()
      let cancellable = $count.publisher.sink { emitted.append($0) }
      defer { cancellable.cancel() }
      for _ in 1...5 {
        $count.withLock { $0 += 1 }
        try await $count.save()
      }
      #expect(decodeFile(url, as: Int.self) == 5)
      #expect($count.saveError == nil)
      // Another process writes last: once its value arrives, every echo would have arrived.
      let writer = try ChildProcess(["file-write", url.path, "100", "1"])
      #expect(try await writer.waitForExit() == .exited(0))
      #expect(await emitted.wait(for: { $0 == 100 }))
      #expect(emitted.events == [0, 1, 2, 3, 4, 5, 100])
      #expect(count == 100)
    }
  }

  /// An `update` (which writes unconditionally, under the file's lock) between two mutations
  /// continues the run of this process's own versions too: the next mutation's save is no
  /// conflict, and nothing goes backwards.
  @Test func mutationsAroundAnUpdateAreNoConflict() async throws {
    let url = directory.file("count.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url, throttle: .zero)) var count = 0
      let emitted = EventLog<Int>()
      let cancellable = $count.publisher.sink { emitted.append($0) }
      defer { cancellable.cancel() }
      for _ in 1...3 {
        $count.withLock { $0 += 1 }
        try await $count.update { $0 += 1 }
      }
      $count.withLock { $0 += 1 }
      try await $count.save()
      #expect($count.saveError == nil)
      #expect(decodeFile(url, as: Int.self) == 7)
      try Data("100".utf8).write(to: url, options: .atomic)
      #expect(await emitted.wait(for: { $0 == 100 }))
      #expect(emitted.events == [0, 1, 2, 3, 4, 5, 6, 7, 100])
    }
  }

  @Test func corruptFileSetsLoadErrorKeepsTheDefaultAndPreservesTheBytes() async throws {
    let url = directory.file("settings.json")
    try Data("{\"theme\": tru".utf8).write(to: url)
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var settings = Settings()
      #expect(settings == Settings())
      guard case FileStorageKeyError.decodingFailed(_, let preserved?, _)? = $settings.loadError
      else {
        Issue.record("expected decodingFailed, got \(String(describing: $settings.loadError))")
        return
      }
      $settings.withLock { $0.size = 20 }
      try await $settings.save()
      #expect(try Data(contentsOf: preserved) == Data("{\"theme\": tru".utf8))
      #expect(decodeFile(url, as: Settings.self)?.size == 20)
    }
  }

  // Running as root, permission bits do not stop writes; a regular file where the directory
  // should be does (ENOTDIR), and removing it is the "fix".
  @Test func unwritablePathSetsSaveErrorKeepsTheValueAndALaterSaveSucceeds() async throws {
    let blocker = directory.file("blocked")
    _ = FileManager.default.createFile(atPath: blocker.path, contents: Data())
    let url = blocker.appendingPathComponent("settings.json")
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url)) var settings = Settings()
      $settings.withLock { $0.size = 30 }
      await #expect(throws: FileStorageKeyError.self) { try await $settings.save() }
      #expect($settings.saveError is FileStorageKeyError)
      #expect(settings.size == 30)
      try FileManager.default.removeItem(at: blocker)
      try await $settings.save()
      #expect($settings.saveError == nil)
      #expect(decodeFile(url, as: Settings.self)?.size == 30)
    }
  }

  @Test func releasingTheLastHolderWritesThePendingSave() async throws {
    let url = directory.file("count.json")
    let clock = ManualFileClock()  // Never advanced: only the release can write the value.
    let key = FileStorageKey<Int>(
      url: url, throttle: .seconds(1), clock: clock,
      decode: { try JSONDecoder().decode(Int.self, from: $0) },
      encode: { try JSONEncoder().encode($0) })
    withSharedStorage(.isolated(files: .real)) {
      @Shared(key) var count = 0
      $count.withLock { $0 = 1 }
      $count.withLock { $0 = 2 }
    }
    // Releasing the last holder cancels the key's subscription, which writes the pending
    // save at once: the clock never advances, so nothing else could write the value.
    key.storage.waitForWrites()
    try await waitUntil("the released holder's pending save is on disk") {
      decodeFile(url, as: Int.self) == 2
    }
  }
}
