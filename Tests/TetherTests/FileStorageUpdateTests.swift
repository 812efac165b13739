import Foundation
import Streams
import Synchronization
import TestSupport
import Testing
import TetherSupport
import TetherTesting

@testable import Tether

/// `FileStorageKey` as an `AtomicSharedKey` (issue #11): `update` across real processes, and
/// the conflict check of `withLock` saves, on real files.
@Suite(.isolatedSharedState(files: .real)) struct FileStorageUpdateTests {
  /// The child's `Tally` (Tests/TestChild/FileCommands.swift).
  struct Tally: Codable, Sendable, Equatable {
    var counts: [String: Int] = [:]
    var total = 0
    var touches = 0
  }

  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-update") }

  func update<Value: Sendable>(
    _ key: FileStorageKey<Value>, initialValue: Value,
    _ transform: @escaping @Sendable (inout Value) throws -> Void
  ) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
      key.update(
        transform, initialValue: initialValue,
        continuation: UpdateContinuation { continuation.resume(with: $0) })
    }
  }

  /// Starts `count` updaters of `increments` each (named `p0`, `p1`, …) and waits for them.
  func runUpdaters(
    _ url: URL, count: Int, increments: Int, while other: ChildProcess? = nil
  ) async throws {
    let children = try (0..<count).map {
      try ChildProcess(["file-update", url.path, "p\($0)", "\(increments)"])
    }
    for child in children {
      try await child.waitForLine("done", timeout: .seconds(180))
      #expect(try await child.waitForExit() == .exited(0), "\(child.standardError)")
    }
  }

  func tally(_ url: URL) throws -> Tally {
    try JSONDecoder().decode(Tally.self, from: Data(contentsOf: url))
  }

  // MARK: In one process

  /// While another process holds the file's lock, waiting updates leave Swift's cooperative
  /// pool free: with four times as many updates in flight as the pool has threads, other async
  /// work still runs while the lock is held (it would not if each update parked its thread in
  /// `flock`), and every update lands once the lock is released.
  @Test func updatesWaitingForAnotherProcessesLockDoNotBlockTheCooperativePool() async throws {
    let url = directory.file("count.json")
    let key: FileStorageKey<Int> = .fileStorage(url)
    let holder = try ChildProcess(["file-hold-lock", url.path, "30"])
    try await holder.waitForLine("locked")
    let count = 4 * ProcessInfo.processInfo.activeProcessorCount
    let started = StartedCount()
    let updates = Task {
      try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<count {
          group.addTask {
            started.value.add(1, ordering: .relaxed)
            return try await withCheckedThrowingContinuation { continuation in
              key.update(
                { $0 += 1 }, initialValue: 0,
                continuation: UpdateContinuation { continuation.resume(with: $0) })
            }
          }
        }
        return try await group.reduce(into: [Int]()) { $0.append($1) }
      }
    }
    try await waitUntil("every update has started") {
      started.value.load(ordering: .relaxed) == count
    }
    let others = await withTaskGroup(of: Int.self) { group in
      for index in 0..<count { group.addTask { index } }
      return await group.reduce(0, +)
    }
    #expect(others == count * (count - 1) / 2)
    #expect(holder.isRunning)  // Still holding the lock: the work above did not wait for it.
    #expect(!FileManager.default.fileExists(atPath: url.path))
    holder.closeInput()
    #expect(try await holder.waitForExit() == .exited(0))
    #expect(try await updates.value.sorted() == Array(1...count))
    #expect(decodeFile(url, as: Int.self) == count)
  }

  /// A `$value.load()` made while a save of this process waits for another process's lock
  /// does not park its caller's thread (one of the cooperative pool's few) behind that save:
  /// the key's `load` returns at once, and the load resumes, with the saved value, once the
  /// lock is released and the save written.
  @Test func aLoadBehindASaveWaitingForAnotherProcessesLockDoesNotBlockItsCaller() async throws {
    let url = directory.file("count.json")
    let key: FileStorageKey<Int> = .fileStorage(url)
    let holder = try ChildProcess(["file-hold-lock", url.path, "30"])
    try await holder.waitForLine("locked")
    let saved = EventLog<String>()
    key.save(5, .userInitiated, outcomes: saved)  // Written at once: waits for the lock.
    let log = EventLog<String>()
    // On a thread of its own, so that a load that blocks (the defect) fails the test, not the
    // run: the lock is released below either way.
    Thread {
      key.load(
        context: .userInitiated,
        continuation: LoadContinuation { result in
          log.append("resumed with \(String(describing: try? result.get()))")
        })
      log.append("returned")
    }.start()
    #expect(await log.wait(timeout: .seconds(5)) { $0 == "returned" })
    #expect(log.events == ["returned"], "resumed before the save was written: \(log.events)")
    #expect(holder.isRunning)  // Still holding the lock.
    holder.closeInput()
    #expect(try await holder.waitForExit() == .exited(0))
    #expect(await log.wait { $0 == "resumed with Optional(5)" }, "\(log.events)")
    #expect(await saved.wait { $0 == ["saved"] })
    #expect(decodeFile(url, as: Int.self) == 5)
  }

  @Test func updateTransformsTheStoredValueAndReturnsWhatItStored() async throws {
    let url = directory.file("count.json")
    let key: FileStorageKey<Int> = .fileStorage(url)
    #expect(try await update(key, initialValue: 10) { $0 += 1 } == 11)
    try Data("41".utf8).write(to: url, options: .atomic)  // Written by someone else.
    #expect(try await update(key, initialValue: 10) { $0 += 1 } == 42)
    #expect(decodeFile(url, as: Int.self) == 42)
  }

  @Test func aThrowingTransformWritesNothing() async throws {
    struct Refused: Error {}
    let url = directory.file("count.json")
    try Data("7".utf8).write(to: url)
    let key: FileStorageKey<Int> = .fileStorage(url)
    await #expect(throws: Refused.self) {
      try await update(key, initialValue: 0) { _ in throw Refused() }
    }
    #expect(try Data(contentsOf: url) == Data("7".utf8))
  }

  @Test func updatingACorruptFileFailsAndKeepsItsBytes() async throws {
    let url = directory.file("count.json")
    try Data("{oops".utf8).write(to: url)
    let key: FileStorageKey<Int> = .fileStorage(url)
    do {
      _ = try await update(key, initialValue: 0) { $0 += 1 }
      Issue.record("the update of a corrupt file succeeded")
    } catch FileStorageKeyError.decodingFailed(_, let preserved?, _) {
      #expect(try Data(contentsOf: preserved) == Data("{oops".utf8))
    }
  }

  // The second mutation waits for its (long) throttle window while another process writes
  // the file: the newer file wins and the holder learns of the conflict.
  // The time limit catches a `save()` that waits for the 600 s window instead of writing at once
  // (it did, when the context carried a version and was compared whole with `.userInitiated`).
  @Test(.timeLimit(.minutes(1))) func aWithLockSaveOverAnotherProcessesChangeIsAConflict()
    async throws
  {
    let url = directory.file("count.json")
    try Data("1".utf8).write(to: url)
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(.fileStorage(url, throttle: .seconds(600))) var count = 0
      #expect(count == 1)
      $count.withLock { $0 = 2 }  // Written at once.
      try await waitUntil("the first save is on disk") { decodeFile(url, as: Int.self) == 2 }
      $count.withLock { $0 = 3 }  // Waits for the window; made from 2, not from 5.
      let child = try ChildProcess(["file-write", url.path, "5", "1"])
      #expect(try await child.waitForExit() == .exited(0))
      try await waitUntil("the conflict is reported") {
        if case FileStorageKeyError.conflict? = $count.saveError { return true }
        return false
      }
      try await waitUntil("the holder has the file's value") { count == 5 }
      #expect(decodeFile(url, as: Int.self) == 5, "the newer file was kept")
      // An explicit save writes unconditionally.
      $count.withLock { $0 = 9 }
      try await $count.save()
      #expect(decodeFile(url, as: Int.self) == 9)
      #expect($count.saveError == nil)
    }
  }

  // An update runs on its caller's thread when nothing waits on the file's queue, inside
  // `queue.sync`. One started from that queue (here from a key's `decode`, which a load runs
  // there) must not: it would wait for itself forever. It runs after the load instead.
  @Test(.timeLimit(.minutes(1))) func anUpdateStartedOnTheFilesQueueDoesNotWaitForItself()
    async throws
  {
    let url = directory.file("count.json")
    try Data("5".utf8).write(to: url)
    let plain: FileStorageKey<Int> = .fileStorage(url)
    let outcome = Lock<Result<Int, any Error>?>(nil)
    let startedUpdate = Lock(false)
    let loading: FileStorageKey<Int> = .fileStorage(
      url,
      decode: { data in
        let first = startedUpdate.withLock { started in
          defer { started = true }
          return !started
        }
        if first {
          plain.update(
            { $0 += 1 }, initialValue: 0,
            continuation: UpdateContinuation { result in outcome.withLock { $0 = result } })
        }
        return try JSONDecoder().decode(Int.self, from: data)
      },
      encode: { try JSONEncoder().encode($0) })
    let loaded = Lock<Int?>(nil)
    loading.load(
      context: .initialValue(0),
      continuation: LoadContinuation { result in
        loaded.withLock { $0 = try? result.get() ?? 0 }
      })
    #expect(loaded.withLock { $0 } == 5, "the load read the file before the update")
    try await waitUntil("the update finished") { outcome.withLock { $0 } != nil }
    #expect(try outcome.withLock { $0 }?.get() == 6)
    #expect(decodeFile(url, as: Int.self) == 6)
  }

  // MARK: Across processes

  @Test(.heavy) func twoProcessesTimes500UpdatesEndExactlyAt1000() async throws {
    let url = directory.file("tally.json")
    try await runUpdaters(url, count: 2, increments: 500)
    let result = try tally(url)
    #expect(result.total == 1_000)
    #expect(result.counts == ["p0": 500, "p1": 500])
  }

  @Test(.heavy) func fourProcessesTimes500UpdatesEndExactlyAt2000() async throws {
    let url = directory.file("tally.json")
    try await runUpdaters(url, count: 4, increments: 500)
    let result = try tally(url)
    #expect(result.total == 2_000)
    #expect(result.counts == ["p0": 500, "p1": 500, "p2": 500, "p3": 500])
  }

  // A withLock mutation made from the old value in the microseconds while another process's
  // value is handed to its holder must fail as a conflict, never overwrite the newer file.
  @Test(.heavy) func updatesStayExactWhileAFifthProcessSavesWithWithLock() async throws {
    let url = directory.file("tally.json")
    let toucher = try ChildProcess(["file-touch", url.path])
    try await toucher.waitForLine("ready")
    try await runUpdaters(url, count: 4, increments: 500)
    toucher.closeInput()
    let report = try await toucher.waitForLine(containing: "touched", timeout: .seconds(30))
    #expect(try await toucher.waitForExit() == .exited(0))
    let result = try tally(url)
    #expect(result.total == 2_000, "\(report)")
    #expect(result.counts == ["p0": 500, "p1": 500, "p2": 500, "p3": 500], "\(report)")
  }

  @Test(.heavy) func anUpdaterKilledMidUpdateNeitherBlocksNorCorruptsTheOthers() async throws {
    let url = directory.file("tally.json")
    let victim = try ChildProcess(["file-update", url.path, "victim", "1000000"])
    try await victim.waitForLine("progress 20")
    let survivors = try (0..<3).map {
      try ChildProcess(["file-update", url.path, "p\($0)", "500"])
    }
    try await survivors[0].waitForLine("progress 10")
    victim.kill()
    #expect(try await victim.waitForExit() == .signaled(SIGKILL))
    for child in survivors {
      try await child.waitForLine("done", timeout: .seconds(180))
      #expect(try await child.waitForExit() == .exited(0))
    }
    let result = try tally(url)
    let victimCount = result.counts["victim"] ?? 0
    #expect(victimCount >= 20)
    #expect(result.total == 1_500 + victimCount)
    #expect(result.counts.filter { $0.key != "victim" } == ["p0": 500, "p1": 500, "p2": 500])
  }
}

/// How many tasks have started, shared by reference with the tasks.
private final class StartedCount: Sendable {
  let value = Atomic<Int>(0)
}
