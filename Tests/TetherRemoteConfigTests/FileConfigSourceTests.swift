import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

@Suite struct FileConfigSourceTests {
  @Test func readsTheFile() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(document(["welcome_title": #""From file""#]), to: "config.json")
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "From file")
    #expect(config.lastFetchStatus == .success)
  }

  @Test func editingTheFileDeliversTheUpdateWithoutPolling() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(document(["max_items": "1"]), to: "config.json")
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    try await config.fetchAndActivate()
    let values = Recorder(config.values(for: .maxItems))
    let updates = Recorder(config.updates)
    try await values.waitForValues(1)
    #expect(!config.isPolling)

    // An atomic replace, as deploy tools and editors do it.
    try directory.write(document(["max_items": "2"]), to: "config.json")
    #expect(try await values.waitForValues(2) == [1, 2])
    #expect(try await updates.waitForValues(1) == [ConfigUpdate(updatedKeys: ["max_items"])])

    // An in-place write.
    let handle = try FileHandle(forWritingTo: directory.file("config.json"))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(document(["max_items": "3"]).utf8))
    try handle.close()
    #expect(try await values.waitForValues(3) == [1, 2, 3])
    #expect(!config.isPolling)
  }

  @Test func aBrokenEditIsReportedAndTheNextGoodOneApplies() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(document(["max_items": "1"]), to: "config.json")
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    try await config.fetchAndActivate()
    let values = Recorder(config.values(for: .maxItems))
    try await values.waitForValues(1)

    try directory.write("{\"max_items\": ", to: "config.json")
    try await waitUntil("the malformed file to be reported") {
      if case .malformedJSON? = config.lastError { return true }
      return false
    }
    #expect(config[.maxItems] == 1)
    try directory.write(document(["max_items": "4"]), to: "config.json")
    #expect(try await values.waitForValues(2) == [1, 4])
  }

  @Test func aMissingFileIsATypedError() async throws {
    let directory = try TemporaryDirectory()
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("absent.json")))
    await #expect {
      try await config.fetchAndActivate()
    } throws: { error in
      if case .fileUnreadable = error as? RemoteConfigError { return true }
      return false
    }
  }

  @Test func anUnchangedFileIsNotModified() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(document(["max_items": "1"]), to: "config.json")
    let source = FileConfigSource(url: directory.file("config.json"), watch: false)
    guard
      case .modified(let payload) = try await source.fetch(
        ConfigFetchRequest(previousVersion: nil, timeout: 5))
    else {
      Issue.record("expected the file's entries")
      return
    }
    let again = try await source.fetch(
      ConfigFetchRequest(previousVersion: payload.version, timeout: 5))
    guard case .notModified = again else {
      Issue.record("expected notModified, got \(again)")
      return
    }
  }
}
