import Foundation
import Synchronization
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// `FileStorageKey` through its protocol methods (load, subscribe, save with continuations),
/// against real files in a temporary directory. Throttling runs on a manual clock.
@Suite(.isolatedSharedState(files: .real)) struct FileStorageKeyTests {
  let directory: TemporaryDirectory
  let clock = ManualFileClock()

  init() throws { directory = try TemporaryDirectory(prefix: "tether-file") }

  func key(_ name: String = "value.json", window: Duration = .seconds(1)) -> FileStorageKey<Int> {
    FileStorageKey(
      url: directory.file(name), throttle: window, clock: clock,
      decode: { try JSONDecoder().decode(Int.self, from: $0) },
      encode: { try JSONEncoder().encode($0) })
  }

  // MARK: Loading

  @Test func missingFileLoadsTheDefaultAndCreatesNoFile() throws {
    let key = key()
    #expect(try key.loadResult(.initialValue(5)).get() == nil)
    let subscription = key.subscribe(into: EventLog())
    subscription.cancel()
    key.storage.waitForWrites()
    #expect(try directory.contents() == [])
  }

  @Test func emptyFileLoadsTheDefault() throws {
    _ = FileManager.default.createFile(atPath: directory.file("value.json").path, contents: Data())
    #expect(try key().loadResult(.initialValue(5)).get() == nil)
  }

  @Test func existingFileLoads() throws {
    try Data("42".utf8).write(to: directory.file("value.json"))
    #expect(try key().loadResult(.initialValue(5)).get() == 42)
  }

  // MARK: Throttling

  @Test func firstSaveIsWrittenAtOnceAndLaterSavesCoalesceIntoOneTrailingWrite() async throws {
    let key = key()
    let writes = WriteCounter(key.url)
    key.save(1)
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 1)
    for value in 2...50 { key.save(value) }
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 1)
    #expect(key.storage.writeCount == 1)

    clock.advance(by: .milliseconds(999))
    key.storage.waitForWrites()
    #expect(key.storage.writeCount == 1)
    clock.advance(by: .milliseconds(1))
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 50)
    #expect(key.storage.writeCount == 2)
    let fileWrites = await writes.settledCount()
    #expect(fileWrites == 2, "events seen: \(writes.events)")
  }

  @Test func saveAfterTheWindowIsWrittenAtOnce() async throws {
    let key = key()
    let writes = WriteCounter(key.url)
    key.save(1)
    clock.advance(by: .seconds(2))
    key.save(2)
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 2)
    let fileWrites = await writes.settledCount()
    #expect(fileWrites == 2, "events seen: \(writes.events)")
  }

  @Test func userInitiatedSaveWritesAtOnceAndTakesThePendingSaveWithIt() async throws {
    let key = key()
    let writes = WriteCounter(key.url)
    let outcomes = EventLog<String>()
    key.save(1, outcomes: outcomes)
    key.save(2, outcomes: outcomes)
    try await key.saveAndWait(3)
    #expect(decodeFile(key.url, as: Int.self) == 3)
    #expect(await outcomes.wait { $0.count == 2 })
    clock.advance(by: .seconds(5))
    key.storage.waitForWrites()
    let fileWrites = await writes.settledCount()
    #expect(fileWrites == 2, "events seen: \(writes.events)")
    #expect(decodeFile(key.url, as: Int.self) == 3)
  }

  @Test func savesReturnBeforeEncodingAndWritingHappen() async throws {
    let gate = DispatchSemaphore(value: 0)
    let key = FileStorageKey<Int>(
      url: directory.file("value.json"), throttle: .seconds(1), clock: clock,
      decode: { try JSONDecoder().decode(Int.self, from: $0) },
      encode: { value in
        gate.wait()  // Holds the writer until the test has seen `save` return.
        return try JSONEncoder().encode(value)
      })
    let outcomes = EventLog<String>()
    key.save(1, outcomes: outcomes)
    key.save(2, .userInitiated, outcomes: outcomes)
    #expect(outcomes.events.isEmpty)
    // Nothing written yet (the writer may already hold the sidecar lock file's lock).
    #expect(try directory.contents().filter { !$0.hasSuffix(".tether-lock") } == [])
    gate.signal()
    gate.signal()
    #expect(await outcomes.wait { $0.count == 2 })
    #expect(decodeFile(key.url, as: Int.self) == 2)
  }

  // A process the app spawns (with `posix_spawn`, `fork`/`exec`, `system`) while a save is
  // writing must not keep the temporary file open for writing after `exec`.
  @Test func theTemporaryFileOfAWriteIsClosedOnExec() throws {
    let prefix = directory.file(".value.json.tether-").path
    let (descriptor, path) = try FileSystem.createTemporaryFile(prefix: prefix)
    defer {
      close(descriptor)
      unlink(path)
    }
    #expect(path.hasPrefix(prefix) && path.count == prefix.count + 6)
    #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
  }

  // A writer killed between creating its temporary file and renaming it leaves the file
  // behind. The first key of a process in that directory removes such files (of any file in
  // the directory) once they are old enough that no live writer (in any process) can still
  // own them, and nothing else.
  @Test func temporaryFilesAbandonedByKilledWritersAreRemovedOnFirstUse() throws {
    let longAgo = Date().addingTimeInterval(-3_600)
    func file(_ name: String, modified: Date) throws -> String {
      let url = directory.file(name)
      try Data("partial".utf8).write(to: url)
      try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
      return url.path
    }
    let abandoned = try file(".value.json.tether-Ab12Cd", modified: longAgo)
    let beingWritten = try file(".value.json.tether-Zz99Yy", modified: Date())
    let anotherFiles = try file(".other.json.tether-Ab12Cd", modified: longAgo)
    let notOurs = try file("other.json.tether-Ab12Cd", modified: longAgo)
    let notATemporaryName = try file(".value.json.tether-Ab12Cd3", modified: longAgo)

    let key = key()
    #expect(try key.loadResult(.initialValue(0)).get() == nil)
    key.storage.waitForWrites()

    #expect(!FileManager.default.fileExists(atPath: abandoned))
    #expect(FileManager.default.fileExists(atPath: beingWritten))
    #expect(!FileManager.default.fileExists(atPath: anotherFiles))
    #expect(FileManager.default.fileExists(atPath: notOurs))
    #expect(FileManager.default.fileExists(atPath: notATemporaryName))
  }

  // MARK: Flushing

  @Test func cancellingTheSubscriptionWritesThePendingSave() throws {
    let key = key()
    let subscription = key.subscribe(into: EventLog())
    key.save(1)
    key.save(2)
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 1)
    subscription.cancel()
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 2)
  }

  // The exit flush is tested in a real process that exits right after mutating:
  // `FileStorageCrossProcessTests.aPendingWriteIsFlushedWhenAChildMutatesAndExitsAtOnce`.
  // (Calling it here would flush every other test's pending saves too.)

  @Test func userInitiatedLoadWritesThePendingSaveFirst() async throws {
    let key = key()
    key.save(1)
    key.save(2)
    // Resumed from the file's queue: a pending write to flush may wait for another process.
    #expect(try await key.awaitedLoadResult(.userInitiated).get() == 2)
  }

  // MARK: Change detection

  @Test func ownWritesAreNotReportedAsChanges() async throws {
    let key = key()
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    for value in 1...5 { try await key.saveAndWait(value) }
    // An external write after them: once it arrives, every earlier event has been handled.
    try Data("99".utf8).write(to: key.url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(99) }))
    #expect(log.events == [.value(99)])
  }

  @Test func externalWriteDuringTheThrottleWindowWins() async throws {
    let key = key()
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    let outcomes = EventLog<String>()
    key.save(1, outcomes: outcomes)
    key.save(2, outcomes: outcomes)  // Pending for the trailing write.
    #expect(await outcomes.wait { $0.count == 1 })
    try Data("7".utf8).write(to: key.url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(7) }))
    #expect(await outcomes.wait { $0.count == 2 })  // The superseded save is resumed.
    clock.advance(by: .seconds(5))
    key.storage.waitForWrites()
    #expect(decodeFile(key.url, as: Int.self) == 7)
    #expect(key.storage.writeCount == 1)
  }

  @Test func inPlaceWriteAtomicReplaceDeletionAndRecreationAreReported() async throws {
    let key = key()
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    _ = FileManager.default.createFile(atPath: key.url.path, contents: Data("1".utf8))
    #expect(await log.wait(for: { $0 == .value(1) }))
    try writeInPlace("2", to: key.url)
    #expect(await log.wait(for: { $0 == .value(2) }))
    try Data("3".utf8).write(to: key.url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(3) }))
    try FileManager.default.removeItem(at: key.url)
    #expect(await log.wait(for: { $0 == .initialValue }))
    try Data("4".utf8).write(to: key.url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(4) }))
  }

  // Paths nobody uses are forgotten, but a subscription still in place is a use: it keeps
  // the file watched after every key for it is gone (the propagation benchmark's rig does this).
  @Test func aSubscriptionKeepsWatchingAfterItsKeyIsReleased() async throws {
    let url = directory.file("value.json")
    let log = EventLog<KeyEvent<Int>>()
    let subscription = { FileStorageKey<Int>.fileStorage(url).subscribe(into: log) }()
    defer { subscription.cancel() }
    try Data("6".utf8).write(to: url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(6) }))
  }

  @Test func aDirectoryThatDoesNotExistYetIsWatchedAndCreatedOnSave() async throws {
    let key = key("a/b/value.json")
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    try FileManager.default.createDirectory(
      at: directory.file("a/b"), withIntermediateDirectories: true)
    try Data("8".utf8).write(to: key.url, options: .atomic)
    #expect(await log.wait(for: { $0 == .value(8) }))

    let other = self.key("c/d/value.json")
    try await other.saveAndWait(9)
    #expect(decodeFile(other.url, as: Int.self) == 9)
  }

  // MARK: Bad input

  @Test func corruptFileFailsToLoadAndIsMovedAsideBeforeAnySave() async throws {
    let key = key()
    try Data("{not json".utf8).write(to: key.url)
    let result = key.loadResult(.initialValue(0))
    guard case .failure(FileStorageKeyError.decodingFailed(_, let preserved?, _)) = result else {
      Issue.record("expected decodingFailed with a preserved copy, got \(result)")
      return
    }
    #expect(preserved.lastPathComponent.hasPrefix("value.json.corrupt-"))
    try await key.saveAndWait(3)
    #expect(decodeFile(key.url, as: Int.self) == 3)
    #expect(try Data(contentsOf: preserved) == Data("{not json".utf8))
    // (Besides the sidecar lock file every write takes.)
    #expect(
      try directory.contents().filter { !$0.hasSuffix(".tether-lock") }
        == ["value.json", preserved.lastPathComponent])
  }

  @Test func corruptExternalWriteIsReportedAndPreserved() async throws {
    let key = key()
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    try Data("garbage".utf8).write(to: key.url, options: .atomic)
    #expect(
      await log.wait(for: {
        if case .failure(let message) = $0 { return message.contains("could not decode") }
        return false
      }))
    #expect(try Data(contentsOf: key.url) == Data("garbage".utf8))  // Left for its writer.
    try await key.saveAndWait(4)
    let preserved = try directory.contents().filter { $0.hasPrefix("value.json.corrupt-") }
    #expect(preserved.count == 1)
    let bytes = preserved.first.map { try? Data(contentsOf: directory.file($0)) }
    #expect(bytes == Data("garbage".utf8))
    #expect(decodeFile(key.url, as: Int.self) == 4)
  }

  // Running as root, permission bits do not stop writes; a regular file where the key's
  // directory should be does: mkdir and open fail with ENOTDIR, as for any unwritable path.
  @Test func unwritablePathBecauseTheParentIsARegularFileFailsThenSucceedsOnceFixed() async throws {
    let blocker = directory.file("blocked")
    _ = FileManager.default.createFile(atPath: blocker.path, contents: Data("file".utf8))
    let key = key("blocked/value.json")
    await #expect {
      try await key.saveAndWait(1)
    } throws: { error in
      guard case FileStorageKeyError.writeFailed(_, let code) = error else { return false }
      return code == ENOTDIR
    }
    try FileManager.default.removeItem(at: blocker)
    try await key.saveAndWait(2)
    #expect(decodeFile(key.url, as: Int.self) == 2)
  }

  // MARK: Identity and size

  @Test func differentSpellingsOfOnePathShareOneIdentity() throws {
    let base = directory.url.path
    let keys: [FileStorageKey<Int>] = [
      .fileStorage(URL(fileURLWithPath: "\(base)/a/b.json")),
      .fileStorage(URL(fileURLWithPath: "\(base)/a//b.json")),
      .fileStorage(URL(fileURLWithPath: "\(base)/a/./b.json")),
      .fileStorage(URL(fileURLWithPath: "\(base)/a/c/../b.json")),
    ]
    #expect(Set(keys.map(\.id)).count == 1)
    #expect(keys.allSatisfy { $0.storage === keys[0].storage })
    #expect(keys[0].id.path.hasSuffix("/a/b.json"))
  }

  @Test func tenMegabyteValueRoundTrips() async throws {
    let key: FileStorageKey<[String]> = .fileStorage(directory.file("big.json"))
    let value = (0..<10).map { String(repeating: Character(String($0)), count: 1_000_000) }
    try await key.saveAndWait(value)
    #expect(try key.loadResult(.initialValue([])).get() == value)
  }
}
