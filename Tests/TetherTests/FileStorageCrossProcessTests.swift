import Foundation
import Testing

@testable import Tether

/// `FileStorageKey` between two real processes: this test process and `tether-test-child`.
@Suite struct FileStorageCrossProcessTests {
  let directory: FileTestDirectory

  init() throws { directory = try FileTestDirectory() }

  /// Starts a child holding the key for `url` and waits until it is watching.
  func holder(_ url: URL) async throws -> FileTestChild {
    let child = try FileTestChild(["file-hold", url.path])
    #expect(await child.waitForLine("ready"))
    return child
  }

  @Test func anotherProcessSeesInPlaceWritesReplacesDeletionAndRecreation() async throws {
    defer { directory.remove() }
    let url = directory.file("value.json")
    try Data("1".utf8).write(to: url)
    let child = try await holder(url)
    #expect(child.lines.events.first == "value 1")

    try writeInPlace("2", to: url)
    #expect(await child.waitForLine("value 2"))
    try Data("3".utf8).write(to: url, options: .atomic)
    #expect(await child.waitForLine("value 3"))
    try FileManager.default.removeItem(at: url)
    #expect(await child.waitForLine("default"))
    try Data("4".utf8).write(to: url, options: .atomic)
    #expect(await child.waitForLine("value 4"))

    child.closeInput()
    #expect(await child.waitForExit() == 0)
  }

  @Test func anotherProcessWatchesADirectoryThatDoesNotExistYet() async throws {
    defer { directory.remove() }
    let url = directory.file("later/deeper/value.json")
    let child = try await holder(url)
    #expect(child.lines.events.first == "default")
    let key: FileStorageKey<Int> = .fileStorage(url)
    try await key.saveAndWait(5)
    #expect(await child.waitForLine("value 5"))
    child.closeInput()
    #expect(await child.waitForExit() == 0)
  }

  @Test func writesFromAnotherProcessReachAHolderHere() async throws {
    defer { directory.remove() }
    let key: FileStorageKey<Int> = .fileStorage(directory.file("value.json"))
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    let child = try FileTestChild(["file-write", key.url.path, "10", "3"])
    #expect(await child.waitForExit() == 0)
    #expect(await log.wait(for: { $0 == .value(12) }))
  }

  @Test func aReaderInAnotherProcessNeverSeesAPartialFileDuring1000Saves() async throws {
    defer { directory.remove() }
    let key: FileStorageKey<[Int]> = .fileStorage(directory.file("storm.json"))
    try await key.saveAndWait(Array(repeating: 0, count: 2_000))
    let reader = try FileTestChild(["file-read-loop", key.url.path])
    #expect(await reader.waitForLine("ready"))
    for index in 1...1_000 {
      try await key.saveAndWait(Array(repeating: index, count: 2_000))
    }
    reader.closeInput()
    #expect(await reader.waitForLine("reads", prefix: true))
    let report = reader.lines.events.last ?? ""
    #expect(report.hasSuffix("undecodable 0"), "\(report)")
    #expect(await reader.waitForExit() == 0)
  }

  @Test func aPendingWriteIsFlushedWhenAChildMutatesAndExitsAtOnce() async throws {
    defer { directory.remove() }
    let url = directory.file("value.json")
    let child = try FileTestChild(["file-mutate-exit", url.path, "21"])
    #expect(await child.waitForExit() == 0)
    #expect(decodeFile(url, as: Int.self) == 21)
  }

  @Test func aChildKilledDuringAWriteStormLeavesACompleteFile() async throws {
    defer { directory.remove() }
    let url = directory.file("storm.json")
    for round in 1...20 {
      let child = try FileTestChild(["file-storm", url.path])
      #expect(await child.waitForLine("started"), "round \(round)")
      child.kill()
      #expect(await child.waitForExit() != nil)
      let data = try Data(contentsOf: url)
      let values = try JSONDecoder().decode([Int].self, from: data)
      #expect(values.count == 2_000 && Set(values).count == 1, "round \(round)")
    }
  }
}
