import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

@Suite struct ConfigCacheTests {
  /// A URL on a loopback port nobody listens on.
  static func unreachableURL() async throws -> URL {
    let server = try await TestHTTPServer.start()
    let url = server.url(for: Fixture.path)
    server.stop()
    return url
  }

  @Test func aRestartWithoutNetworkStartsFromTheCache() async throws {
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("cache/remote-config.json")
    let fixture = try await Fixture(
      document(["welcome_title": #""Cached""#, "tags": #"["a"]"#]), cacheURL: cacheURL)
    try await fixture.config.fetchAndActivate()
    let fetchTime = try #require(fixture.config.lastFetchTime)
    #expect(FileManager.default.fileExists(atPath: cacheURL.path))
    // Written atomically: only the cache file is left in its directory.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: cacheURL.deletingLastPathComponent().path)
        == ["remote-config.json"])

    let restarted = RemoteConfig(
      source: HTTPConfigSource(url: try await Self.unreachableURL()),
      settings: RemoteConfigSettings(fetchTimeout: 2), cacheURL: cacheURL)
    #expect(restarted[.welcomeTitle] == "Cached")
    #expect(restarted[.tags] == ["a"])
    #expect(restarted.configValue(for: .welcomeTitle).source == .remote)
    #expect(abs(try #require(restarted.lastFetchTime).timeIntervalSince(fetchTime)) < 0.001)
    #expect(restarted.lastError == nil)

    restarted.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await restarted.fetchAndActivate() }
    #expect(restarted[.welcomeTitle] == "Cached")
  }

  @Test func theCacheKeepsTheETagForTheFirstConditionalFetch() async throws {
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("remote-config.json")
    let fixture = try await Fixture(document(["max_items": "5"]), cacheURL: cacheURL)
    try await fixture.config.fetchAndActivate()
    let restarted = RemoteConfig(source: fixture.source, cacheURL: cacheURL)
    let updates = Recorder(restarted.updates)
    restarted.isStale = true
    #expect(try await restarted.fetchAndActivate() == false)
    let second = try #require(fixture.server.requests(at: Fixture.path).last)
    #expect(second.header("If-None-Match") == fixture.server.document(at: Fixture.path)?.etag)
    #expect(updates.values.isEmpty)
    #expect(restarted[.maxItems] == 5)
  }

  @Test(arguments: ["{not json", "[1, 2]", #"{"format": 99, "entries": {}}"#, ""])
  func aCorruptCacheIsReportedAndMovedAside(contents: String) async throws {
    let directory = try TemporaryDirectory()
    try directory.write(contents, to: "remote-config.json")
    let fixture = try await Fixture(
      document(["max_items": "8"]), cacheURL: directory.file("remote-config.json"))
    let config = fixture.config
    guard case .corruptCache(let movedTo?, _)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(try String(contentsOfFile: movedTo, encoding: .utf8) == contents)
    #expect(try directory.contents().contains { $0.hasPrefix("remote-config.json.corrupt-") })
    #expect(config[.maxItems] == 10)
    #expect(config.activeKeys.isEmpty)

    // The next activation writes a good cache again.
    try await config.fetchAndActivate()
    let restarted = RemoteConfig(cacheURL: directory.file("remote-config.json"))
    #expect(restarted.lastError == nil)
    #expect(restarted[.maxItems] == 8)
  }

  /// Every key of a large cache comes back on the next start. (How fast is the benchmark's
  /// `config.start-cached-1000`, not a timed test.)
  @Test func aCacheOf1000KeysComesBackWhole() async throws {
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("remote-config.json")
    let entries = (0..<1000).map { #""key_\#($0)": "value \#($0)""# }.joined(separator: ", ")
    let fixture = try await Fixture("{\(entries)}", cacheURL: cacheURL)
    try await fixture.config.fetchAndActivate()
    let restarted = RemoteConfig(cacheURL: cacheURL)
    #expect(restarted.activeKeys.count == 1000)
    #expect(restarted[ConfigKey<String>("key_0")] == "value 0")
    #expect(restarted[ConfigKey<String>("key_999")] == "value 999")
  }
}
