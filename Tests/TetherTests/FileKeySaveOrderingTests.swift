import Foundation
import Synchronization
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// A file key keeps one save in flight per reference like every other key (issue #32), and
/// its throttle still coalesces `.didSet` saves, without ever making a `save()` or an `update`
/// wait for the throttle window. The window runs on a manual clock: only the test moves it.
@Suite(.isolatedSharedState(files: .real)) struct FileKeySaveOrderingTests {
  let directory: TemporaryDirectory
  let clock = ManualFileClock()

  init() throws { directory = try TemporaryDirectory(prefix: "tether-file") }

  func key(_ name: String = "count.json") -> FileStorageKey<Int> {
    FileStorageKey(
      url: directory.file(name), throttle: .seconds(1), clock: clock,
      decode: { try JSONDecoder().decode(Int.self, from: $0) },
      encode: { try JSONEncoder().encode($0) })
  }

  /// Runs `operation` in a task and tells whether it ended within 10 s with the clock standing
  /// still. Without the flush it waits for the throttle window: windows are then ended one
  /// after the other (at most five), so the test ends either way. Rethrows its error once it
  /// has ended.
  func endsWithoutAWindow(
    _ what: String, _ operation: @escaping @Sendable () async throws -> Void
  ) async throws -> Bool {
    let ended = Atomic<Bool>(false)
    let task = Task {
      defer { ended.store(true, ordering: .releasing) }
      try await operation()
    }
    let inTime =
      (try? await waitUntil("\(what) ended", timeout: .seconds(10)) {
        ended.load(ordering: .acquiring)
      }) != nil
    for _ in 0..<5 where !ended.load(ordering: .acquiring) {
      clock.advance(by: .seconds(2))
      _ = try? await waitUntil("a window's write", timeout: .seconds(2)) {
        ended.load(ordering: .acquiring)
      }
    }
    // One that never ends is left behind: the caller fails on `false`.
    if ended.load(ordering: .acquiring) { try await task.value }
    return inTime
  }

  /// The first change is written at once, the second is held for the window, the third waits
  /// behind it: `save()` writes the held one and then the newest value at once, with the clock
  /// standing still.
  @Test func aSaveBehindAThrottledSaveDoesNotWaitForTheWindow() async throws {
    let key = key()
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(key) var count = 0
      $count.withLock { $0 = 1 }
      try await waitUntil("the first change written at once") {
        decodeFile(key.url, as: Int.self) == 1
      }
      $count.withLock { $0 = 2 }  // held by the throttle
      $count.withLock { $0 = 3 }  // waits behind it
      let shared = $count
      let inTime = try await endsWithoutAWindow("save()") { try await shared.save() }
      #expect(inTime, "save() waited for the throttle window")
      #expect(decodeFile(key.url, as: Int.self) == 3)
      #expect($count.saveError == nil)
    }
  }

  /// `.didSet` saves still coalesce: nothing is written before the window ends, however many
  /// changes, then at most one write per window until the newest value is stored, and no
  /// conflict with the holder's own writes.
  @Test func changesWithinTheWindowCoalesceIntoOneTrailingWrite() async throws {
    let key = key()
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(key) var count = 0
      $count.withLock { $0 = 1 }
      try await waitUntil("the first change written at once") {
        decodeFile(key.url, as: Int.self) == 1
      }
      for value in 2...100 { $count.withLock { $0 = value } }
      key.storage.waitForWrites()
      #expect(key.storage.writeCount == 1, "written before the window ended")
      // Each window's end writes one save; the changes made meanwhile wait as one.
      for _ in 0..<3 where decodeFile(key.url, as: Int.self) != 100 {
        clock.advance(by: .seconds(1))
        key.storage.waitForWrites()
      }
      #expect(decodeFile(key.url, as: Int.self) == 100)
      #expect(key.storage.writeCount <= 3, "\(key.storage.writeCount) writes for 100 changes")
      #expect($count.saveError == nil)
    }
  }

  /// An `update` reads the stored value: changes made before it are written first (the
  /// throttled one at once), so it builds on them, and the changes after it build on its
  /// write without a conflict.
  @Test func anUpdateBuildsOnTheChangesMadeBeforeIt() async throws {
    let key = key()
    try await withSharedStorage(.isolated(files: .real)) {
      @Shared(key) var count = 0
      $count.withLock { $0 += 1 }
      try await waitUntil("the first change written at once") {
        decodeFile(key.url, as: Int.self) == 1
      }
      $count.withLock { $0 += 1 }  // held by the throttle
      $count.withLock { $0 += 1 }  // waits behind it
      let shared = $count
      let inTime = try await endsWithoutAWindow("update") { try await shared.update { $0 += 10 } }
      guard inTime else {
        Issue.record("update waited for the throttle window")
        return
      }
      #expect(count == 13)
      #expect(decodeFile(key.url, as: Int.self) == 13)
      $count.withLock { $0 += 1 }
      try await $count.save()
      #expect(decodeFile(key.url, as: Int.self) == 14)
      #expect($count.saveError == nil)
    }
  }
}
