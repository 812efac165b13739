import Foundation
import TestSupport
import Testing
import TetherTesting

@testable import Tether

/// The length of the child's storm values (`stormLength` in Tests/TestChild/FileCommands.swift).
private let stormLength = 500

/// `FileStorageKey` between two real processes: this test process and `tether-test-child`.
@Suite(.heavy, .isolatedSharedState(files: .real)) struct FileStorageCrossProcessTests {
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

  /// ARCHITECTURE.md, "Where versions are decided": a `.didSet` save carries the version its value was derived from
  /// (`SaveContinuation.version`). Here the holders were already told of another process's newer
  /// file, so the storage's own idea of the current version has moved on; the save's has not,
  /// and it must fail as a conflict, not write over the file nobody derived it from.
  @Test func aSaveDerivedFromAVersionAnotherProcessReplacedIsAConflict() async throws {
    let key: FileStorageKey<Int> = .fileStorage(directory.file("value.json"), throttle: .zero)
    try await key.saveAndWait(1)
    let seen = VersionLog()
    let subscription = key.subscribe(into: seen)
    defer { subscription.cancel() }
    let loaded = try #require(await seen.version(of: 1))

    let child = try ChildProcess(["file-write", key.url.path, "50", "1"])
    #expect(try await child.waitForExit() == .exited(0))
    let replaced = try #require(await seen.version(of: 50))

    await #expect(throws: FileStorageKeyError.conflict(url: key.url)) {
      try await key.saveAndWait(2, .didSet, derivedFrom: loaded)
    }
    #expect(decodeFile(key.url, as: Int.self) == 50, "the stale save overwrote the newer file")
    // A save derived from the version the holders were told of goes through.
    try await key.saveAndWait(3, .didSet, derivedFrom: replaced)
    #expect(decodeFile(key.url, as: Int.self) == 3)
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

/// The values a key loaded and delivered, each with the version the key handed over.
private final class VersionLog: Sendable {
  private let log = EventLog<(value: Int?, version: SharedVersion?)>()

  func append(_ value: Int?, _ version: SharedVersion?) { log.append((value, version)) }

  /// The version handed over with `value`, once it arrives.
  func version(of value: Int) async -> SharedVersion? {
    guard await log.wait(for: { $0.value == value }) else { return nil }
    return log.events.last { $0.value == value }?.version
  }
}

extension FileStorageKey<Int> {
  /// Loads then subscribes, as a new reference does, recording versions.
  fileprivate func subscribe(into log: VersionLog) -> SharedSubscription {
    load(
      context: .userInitiated,
      continuation: LoadContinuation(
        observer: nil,
        versioned: { loaded in
          if case .success(let value) = loaded.outcome { log.append(value, loaded.version) }
        }))
    // Behind a queued job the load runs on the file's queue: done before subscribing.
    storage.waitForWrites()
    return subscribe(
      context: .userInitiated,
      subscriber: SharedSubscriber(versioned: { event, version in
        switch event {
        case .value(let value): log.append(value, version)
        case .initialValue: log.append(nil, version)
        case .failure, .loading: break
        }
      }))
  }
}
