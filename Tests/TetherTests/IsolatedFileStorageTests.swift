import Foundation
import TestSupport
import Testing
import Tether
import TetherTesting

struct IsolatedSettings: Codable, Equatable, Sendable {
  var theme = "light"
  var fontSize = 12
}

/// The pattern the Persisting article teaches: a model with a file value at a real path.
struct SettingsModel {
  @Shared var settings: IsolatedSettings
  init(url: URL) {
    _settings = Shared(wrappedValue: IsolatedSettings(), .fileStorage(url))
  }
}

/// File keys in an isolated scope use the scope's in-memory files, never the disk.
@Suite(.isolatedSharedState)
struct IsolatedFileStorageTests {
  @Test func aModelWithARealPathNeverTouchesIt() async throws {
    try await withTemporaryDirectory { directory in
      let url = directory.file("settings.json")
      let original = Data(#"{"fontSize":30,"theme":"user's own"}"#.utf8)
      try original.write(to: url)
      let model = SettingsModel(url: url)
      #expect(model.settings == IsolatedSettings())  // the real file was not read
      model.$settings.fontSize.withLock { $0 = 18 }
      try await model.$settings.save()
      #expect(try Data(contentsOf: url) == original)  // nor written
      #expect(try directory.contents() == ["settings.json"])  // nothing else appeared
      let files = try #require(SharedStorage.current.files)
      let saved = try #require(files.contents(of: url))
      #expect(try JSONDecoder().decode(IsolatedSettings.self, from: saved).fontSize == 18)
    }
  }

  /// Traced with `strace`, a process whose isolated scope declares a file key for a real
  /// path, then reads, saves, updates, reloads and observes it, makes no system call that names
  /// the path or its directory (no stat, listing, clean-up, lock or watch). The same process
  /// outside the scope does, which shows the trace sees such calls.
  @Test func anIsolatedScopeMakesNoSystemCallNamingTheRealPath() async throws {
    let strace = URL(fileURLWithPath: "/usr/bin/strace", isDirectory: false)
    try #require(
      FileManager.default.isExecutableFile(atPath: strace.path),
      "strace is not installed (Scripts/install-test-deps installs it)")
    let child = try ChildProcess.locateExecutable()
    try await withTemporaryDirectory { directory in
      let settings = try directory.subdirectory("settings")
      let url = settings.appendingPathComponent("count.json", isDirectory: false)
      func trace(_ scope: String) async throws -> [Substring] {
        let log = directory.file("\(scope).strace")
        let process = try ChildProcess(
          ["-f", "-s", "4096", "-e", "trace=file", "-o", log.path, child.path]
            + ["isolated-file-key", scope],
          environment: ["TETHER_REAL_PATH": url.path], executableURL: strace)
        try await process.waitForLine("done")
        #expect(try await process.waitForExit() == .exited(0), "\(process.standardError)")
        return try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
      }
      let control = try await trace("process")
      #expect(control.contains { $0.contains(settings.path) })
      let isolated = try await trace("isolated")
      #expect(isolated.contains { $0.contains("execve(") })  // the trace saw the process
      #expect(isolated.filter { $0.contains(settings.path) } == [])
    }
  }

  @Test func aSeededFileIsLoadedAndSavesAreInspectableByURL() throws {
    let url = URL(fileURLWithPath: "/etc/tether-never-created/settings.json")
    let files = try #require(SharedStorage.current.files)
    files.write(Data(#"{"fontSize":14,"theme":"dark"}"#.utf8), to: url)
    @Shared(.fileStorage(url)) var settings = IsolatedSettings()
    #expect(settings == IsolatedSettings(theme: "dark", fontSize: 14))
    $settings.theme.withLock { $0 = "light" }
    let saved = try #require(
      files.contents(of: URL(fileURLWithPath: "/etc//tether-never-created/./settings.json")))
    #expect(String(decoding: saved, as: UTF8.self) == #"{"fontSize":14,"theme":"light"}"#)
    #expect(!FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path))
  }

  @Test func externalChangesReachHolders() async throws {
    let url = URL(fileURLWithPath: "/var/lib/tether-test/count.json")
    let files = try #require(SharedStorage.current.files)
    @Shared(.fileStorage(url)) var count = 0
    var values = $count.values.makeAsyncIterator()
    #expect(await values.next() == 0)
    files.write(Data("7".utf8), to: url)  // as another process would
    #expect(await values.next() == 7)
    files.removeItem(at: url)
    #expect(await values.next() == 0)  // deleted: back to the default
    files.write(Data("not a number".utf8), to: url)
    try await waitUntil("the bad contents are reported") { $count.loadError != nil }
    #expect(count == 0)
  }

  @Test func aCorruptSeededFileIsKeptAsideAndReported() throws {
    let url = URL(fileURLWithPath: "/srv/app/settings.json")
    let files = try #require(SharedStorage.current.files)
    files.write(Data("{ broken".utf8), to: url)
    @Shared(.fileStorage(url)) var settings = IsolatedSettings()
    #expect(settings == IsolatedSettings())
    guard case .decodingFailed(_, let aside?, _)? = $settings.loadError as? FileStorageKeyError
    else {
      Issue.record("loadError: \(String(describing: $settings.loadError))")
      return
    }
    #expect(files.contents(of: aside) == Data("{ broken".utf8))
    #expect(files.contents(of: url) == nil)
  }

  @Test func eachScopeHasItsOwnFiles() throws {
    let url = URL(fileURLWithPath: "/srv/app/shared.json")
    let first = SharedStorage.isolated
    let second = SharedStorage.isolated
    withSharedStorage(first) {
      @Shared(.fileStorage(url)) var value = 0
      $value.withLock { $0 = 1 }
    }
    let seen = withSharedStorage(second) { Shared(wrappedValue: 0, .fileStorage(url)).wrappedValue }
    #expect(seen == 0)
    #expect(first.files?.contents(of: url) == Data("1".utf8))
    #expect(second.files?.contents(of: url) == nil)
    // The process scope of a test process keeps files in memory too, apart from both.
    #expect(SharedStorage.process.files?.contents(of: url) == nil)
  }

  @Test(.isolatedSharedState(files: .real))
  func aScopeCanOptIntoRealFiles() async throws {
    #expect(SharedStorage.current.files == nil)
    try await withTemporaryDirectory { directory in
      let url = directory.file("real.json")
      @Shared(.fileStorage(url)) var value = 0
      $value.withLock { $0 = 5 }
      try await $value.save()
      #expect(try Data(contentsOf: url) == Data("5".utf8))
    }
  }
}

@Suite(.isolatedSharedState)
struct IsolatedFileStorageUpdateTests {
  @Test func updateIsExactInMemoryToo() async throws {
    let url = URL(fileURLWithPath: "/srv/app/visits.json")
    let files = try #require(SharedStorage.current.files)
    files.write(Data("10".utf8), to: url)
    @Shared(.fileStorage(url)) var visits = 0
    let shared = $visits
    // Every outcome is kept: a thrown error and a lost increment must not look the same.
    let errors = await withTaskGroup(of: String?.self) { group in
      for _ in 0..<200 {
        group.addTask {
          do {
            try await shared.update { $0 += 1 }
            return nil
          } catch {
            return "\(error)"
          }
        }
      }
      return await group.compactMap { $0 }.reduce(into: []) { $0.append($1) }
    }
    #expect(errors == [])
    // The holder ends with the last value stored, whatever order the updating tasks resume in.
    #expect(visits == 210)
    #expect(files.contents(of: url) == Data("210".utf8))
  }
}
