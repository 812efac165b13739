import Foundation
import TestSupport
import Testing

@testable import Tether

/// The length of the child's storm values (`stormLength` in Tests/TestChild/FileCommands.swift).
private let stormLength = 500

/// `FileStorageKey` between two real processes: this test process and `tether-test-child`.
@Suite(.heavy) struct FileStorageCrossProcessTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-file") }

  /// Starts a child holding the key for `url` and waits until it is watching.
  func holder(_ url: URL) async throws -> ChildProcess {
    let child = try ChildProcess(["file-hold", url.path])
    try await child.waitForLine("ready")
    return child
  }

  @Test func anotherProcessSeesInPlaceWritesReplacesDeletionAndRecreation() async throws {
    let url = directory.file("value.json")
    try Data("1".utf8).write(to: url)
    let child = try await holder(url)
    #expect(child.outputLines.first == "value 1")

    try writeInPlace("2", to: url)
    try await child.waitForLine("value 2")
    try Data("3".utf8).write(to: url, options: .atomic)
    try await child.waitForLine("value 3")
    try FileManager.default.removeItem(at: url)
    try await child.waitForLine("default")
    try Data("4".utf8).write(to: url, options: .atomic)
    try await child.waitForLine("value 4")

    child.closeInput()
    #expect(try await child.waitForExit() == .exited(0))
  }

  @Test func anotherProcessWatchesADirectoryThatDoesNotExistYet() async throws {
    let url = directory.file("later/deeper/value.json")
    let child = try await holder(url)
    #expect(child.outputLines.first == "default")
    let key: FileStorageKey<Int> = .fileStorage(url)
    try await key.saveAndWait(5)
    try await child.waitForLine("value 5")
    child.closeInput()
    #expect(try await child.waitForExit() == .exited(0))
  }

  @Test func writesFromAnotherProcessReachAHolderHere() async throws {
    let key: FileStorageKey<Int> = .fileStorage(directory.file("value.json"))
    let log = EventLog<KeyEvent<Int>>()
    let subscription = key.subscribe(into: log)
    defer { subscription.cancel() }
    let child = try ChildProcess(["file-write", key.url.path, "10", "3"])
    #expect(try await child.waitForExit() == .exited(0))
    #expect(await log.wait(for: { $0 == .value(12) }))
  }

  @Test func aReaderInAnotherProcessNeverSeesAPartialFileDuring1000Saves() async throws {
    let key: FileStorageKey<[Int]> = .fileStorage(directory.file("storm.json"))
    try await key.saveAndWait(Array(repeating: 0, count: stormLength))
    let reader = try ChildProcess(["file-read-loop", key.url.path])
    try await reader.waitForLine("ready")
    for index in 1...1_000 {
      try await key.saveAndWait(Array(repeating: index, count: stormLength))
    }
    reader.closeInput()
    let report = try await reader.waitForLine(containing: "reads", timeout: .seconds(20))
    #expect(report.hasSuffix("undecodable 0"), "\(report)")
    #expect(try await reader.waitForExit() == .exited(0))
  }

  @Test func aPendingWriteIsFlushedWhenAChildMutatesAndExitsAtOnce() async throws {
    let url = directory.file("value.json")
    let child = try ChildProcess(["file-mutate-exit", url.path, "21"])
    #expect(try await child.waitForExit() == .exited(0))
    #expect(decodeFile(url, as: Int.self) == 21)
  }

  @Test func aChildKilledDuringAWriteStormLeavesACompleteFile() async throws {
    let url = directory.file("storm.json")
    for round in 1...20 {
      let child = try ChildProcess(["file-storm", url.path])
      try await child.waitForLine("started")
      child.kill()
      #expect(try await child.waitForExit() == .signaled(SIGKILL), "round \(round)")
      let data = try Data(contentsOf: url)
      let values = try JSONDecoder().decode([Int].self, from: data)
      #expect(values.count == stormLength && Set(values).count == 1, "round \(round)")
    }
  }
}
