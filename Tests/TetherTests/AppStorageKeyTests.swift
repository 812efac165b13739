import Foundation
import TestSupport
import Testing
import Tether
import TetherTesting

private enum Theme: String, Sendable { case light, dark }
private enum Level: Int, Sendable { case low = 1, high = 2 }

/// `.appStorage`: `UserDefaults` on every platform, an ephemeral store in isolated scopes, and
/// another process's change reaching holders (on Linux through the defaults file).
@Suite(.isolatedSharedState) struct AppStorageKeyTests {
  @Test func everySupportedTypeIsStoredAsSwiftSharingStoresIt() async throws {
    let defaults = SharedStorage.current.defaults
    @Shared(.appStorage("bool")) var bool = false
    @Shared(.appStorage("int")) var int = 0
    @Shared(.appStorage("double")) var double = 0.0
    @Shared(.appStorage("string")) var string = ""
    @Shared(.appStorage("url")) var url = URL(string: "https://example.com")!
    @Shared(.appStorage("data")) var data = Data()
    @Shared(.appStorage("date")) var date = Date(timeIntervalSince1970: 0)
    @Shared(.appStorage("theme")) var theme = Theme.light
    @Shared(.appStorage("level")) var level = Level.low

    $bool.withLock { $0 = true }
    $int.withLock { $0 = 42 }
    $double.withLock { $0 = 2.5 }
    $string.withLock { $0 = "hello" }
    $url.withLock { $0 = URL(string: "https://tether.dev/docs?q=1")! }
    $data.withLock { $0 = Data([1, 2, 3]) }
    $date.withLock { $0 = Date(timeIntervalSince1970: 1_000_000) }
    $theme.withLock { $0 = .dark }
    $level.withLock { $0 = .high }

    #expect(defaults.bool(forKey: "bool"))
    #expect(defaults.integer(forKey: "int") == 42)
    #expect(defaults.double(forKey: "double") == 2.5)
    #expect(defaults.string(forKey: "string") == "hello")
    #expect(defaults.string(forKey: "url") == "https://tether.dev/docs?q=1")
    #expect(defaults.data(forKey: "data") == Data([1, 2, 3]))
    #expect(defaults.object(forKey: "date") as? Date == Date(timeIntervalSince1970: 1_000_000))
    #expect(defaults.string(forKey: "theme") == "dark")
    #expect(defaults.integer(forKey: "level") == 2)

    // A fresh holder of the same entries (after the first ones are gone) loads them back.
    try await $url.load()
    #expect(url.host() == "tether.dev")
  }

  @Test func seededEntriesLoadAndMissingOrMistypedOnesAreTheDefault() {
    let defaults = SharedStorage.current.defaults
    defaults.set(7, forKey: "count")
    defaults.set("not a number", forKey: "mistyped")
    defaults.set("purple", forKey: "theme")
    @Shared(.appStorage("count")) var count = 0
    @Shared(.appStorage("mistyped")) var mistyped = 3
    @Shared(.appStorage("missing")) var missing = "default"
    @Shared(.appStorage("theme")) var theme = Theme.light
    #expect(count == 7)
    #expect(mistyped == 3)
    #expect(missing == "default")
    #expect(theme == .light)  // not a valid raw value
  }

  @Test func optionalsRemoveTheEntryWhenSetToNil() {
    let defaults = SharedStorage.current.defaults
    @Shared(.appStorage("name")) var name: String? = nil
    @Shared(.appStorage("mode")) var mode: Theme? = nil
    #expect(name == nil)
    $name.withLock { $0 = "ada" }
    $mode.withLock { $0 = .dark }
    #expect(defaults.string(forKey: "name") == "ada")
    #expect(defaults.string(forKey: "mode") == "dark")
    $name.withLock { $0 = nil }
    $mode.withLock { $0 = nil }
    #expect(defaults.object(forKey: "name") == nil)
    #expect(defaults.object(forKey: "mode") == nil)
  }

  @Test func holdersOfOneEntryShareOneValue() {
    @Shared(.appStorage("volume")) var first = 0.5
    @Shared(.appStorage("volume")) var second = 0.5
    $first.withLock { $0 = 0.8 }
    #expect(second == 0.8)
  }

  @Test func anIsolatedScopeHasAnEphemeralStoreOfItsOwn() {
    let key = "tether-isolation-\(UUID().uuidString)"
    let outer = SharedStorage.current.defaults
    #expect(outer !== UserDefaults.standard)
    @Shared(.appStorage(key)) var value = 0
    $value.withLock { $0 = 1 }
    withSharedStorage(.isolated) {
      @Shared(.appStorage(key)) var other = 0
      #expect(other == 0)  // another test's store
      #expect(SharedStorage.current.defaults !== outer)
    }
    #expect(UserDefaults.standard.object(forKey: key) == nil)
  }

  /// In a process running tests, even the process scope keeps `.appStorage` in memory: a
  /// test without the trait never writes the user's defaults (outside tests it is
  /// `UserDefaults.standard`).
  @Test func theProcessScopeOfATestProcessKeepsDefaultsInMemory() {
    #expect(SharedStorage.process.defaults !== UserDefaults.standard)
    let key = "tether-process-scope-\(UUID().uuidString)"
    withSharedStorage(.process) {
      @Shared(.appStorage(key)) var flag = false
      $flag.withLock { $0 = true }
    }
    #expect(SharedStorage.process.defaults.bool(forKey: key))
    #expect(UserDefaults.standard.object(forKey: key) == nil)
  }
}

/// `.appStorage` on a real, persisted store: saves reach the defaults file, and two real
/// processes see each other's changes.
@Suite(.heavy) struct AppStorageKeyCrossProcessTests {
  /// The file swift-corelibs-foundation keeps `suite` in (Linux) — removed after the test.
  static func file(of suite: String) -> URL {
    let environment = ProcessInfo.processInfo.environment
    let config =
      environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
      ?? URL(fileURLWithPath: NSHomeDirectory()).appending(path: ".config")
    return config.appending(path: suite + ".plist")
  }

  /// Removes `suite`'s defaults file and the sidecar lock file saves take on Linux.
  static func removeFiles(of suite: String) {
    let file = file(of: suite)
    try? FileManager.default.removeItem(at: file)
    try? FileManager.default.removeItem(
      at: file.deletingLastPathComponent().appending(path: ".\(suite).plist.tether-lock"))
  }

  @Test func aSaveIsWrittenToTheDefaultsFileAtOnce() throws {
    let suite = "tether-tests-\(UUID().uuidString)"
    defer { Self.removeFiles(of: suite) }
    let store = try #require(UserDefaults(suiteName: suite))
    @Shared(.appStorage("greeting", store: store)) var greeting = "none"
    $greeting.withLock { $0 = "hello" }
    #if os(Linux)
    let data = try Data(contentsOf: Self.file(of: suite))
    let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
    #expect((plist as? [String: Any])?["greeting"] as? String == "hello")
    // The save held the file's sidecar lock, which stays for the next save.
    let lock = Self.file(of: suite).deletingLastPathComponent()
      .appending(path: ".\(suite).plist.tether-lock")
    #expect(FileManager.default.fileExists(atPath: lock.path))
    #endif
    #expect(store.string(forKey: "greeting") == "hello")
  }

  /// Two processes take turns, each writing only after it saw the other's last write: every
  /// change reaches the other process's holder, and none is overwritten by an older one.
  /// (Before saves took the defaults file's sidecar lock, swift-corelibs-foundation's
  /// write-and-read-back could see the other process's newer file, retry, and write its older
  /// value over it: a change was lost in 4 of 9 runs.)
  @Test func twoProcessesTakingTurnsSeeEveryChangeAndLoseNone() async throws {
    let suite = "tether-tests-\(UUID().uuidString)"
    defer { Self.removeFiles(of: suite) }
    let store = try #require(UserDefaults(suiteName: suite))
    @Shared(.appStorage("turn", store: store)) var turn = "none"
    let child = try ChildProcess(["appstorage-peer", suite, "turn"])
    defer { child.terminate() }
    try await child.waitForLine("ready")
    for round in 1...40 {
      // 30 s: generous, because a full parallel run can stall for over 10 s at its start
      // (this suite starts then).
      try child.send(line: "set child \(round)")
      try await waitUntil("the child's write \(round)", timeout: .seconds(30)) {
        turn == "child \(round)"
      }
      $turn.withLock { $0 = "parent \(round)" }
      do {
        try await child.waitForLine("saw parent \(round)", timeout: .seconds(30))
      } catch {
        let file = try? String(contentsOf: Self.file(of: suite), encoding: .utf8)
        Issue.record(
          "round \(round): the file holds \(file ?? "nothing"); this holder shows \(turn)")
        throw error
      }
    }
    child.closeInput()
    #expect(try await child.waitForExit() == .exited(0))
  }
}
