import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

/// Issue #9, items 2 and 13, through a real loopback server.
@Suite struct HostileServerTests {
  @Test(arguments: ["9223372036854775807", "99999999999", "99999999999999999999999999", "-5"])
  func aHugeRetryAfterNeitherTrapsNorStopsPollingBeyondTheMaximumBackoff(
    _ retryAfter: String
  ) async throws {
    let fixture = try await Fixture(
      document(["max_items": "1"]),
      settings: RemoteConfigSettings(fetchTimeout: 5, maximumBackoff: 0.2))
    let config = fixture.config
    fixture.server.inject(
      .status(503, retryAfter: .raw(retryAfter)), at: Fixture.path, count: 2)
    config.startPolling(every: .milliseconds(20))
    defer { config.stopPolling() }
    // Two refusals, then the document: polling goes on within the maximum back-off.
    try await waitUntil("polling to recover", timeout: .seconds(20)) { config[.maxItems] == 1 }
    #expect(config.isPolling)
    let requests = fixture.server.requests(at: Fixture.path)
    #expect(requests.count >= 3)
    // The maximum back-off is 0.2 s, and the Retry-After values ask for days (or are
    // negative). The bound leaves room for a loaded machine: the whole parallel suite once
    // held these polls for 3.4 s in CI, which is still nowhere near what was asked for.
    for (earlier, later) in zip(requests, requests.dropFirst()).prefix(2) {
      #expect(later.arrival - earlier.arrival < .seconds(10))
    }
  }

  @Test func aRetryAfterBeyondTheMaximumBackoffDoesNotBlockFetchesForLong() async throws {
    let fixture = try await Fixture(
      document(["max_items": "2"]),
      settings: RemoteConfigSettings(fetchTimeout: 5, maximumBackoff: 0.1))
    let config = fixture.config
    fixture.server.inject(.status(429, retryAfter: .seconds(Int.max)), at: Fixture.path)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    let retryAfter = try #require(config.lastError?.retryAfter)
    #expect(retryAfter <= 86_400)
    try await waitUntil("a fetch after the maximum back-off") {
      config.isStale = true
      return (try? await config.fetchAndActivate()) != nil
    }
    #expect(config[.maxItems] == 2)
  }

  @Test(arguments: [
    #"{"ratio": 1e999}"#, #"{"ratio": -1e999}"#, #"{"nested": {"list": [1, 2e400]}}"#,
  ])
  func aNumberBeyondDoubleIsRejectedWithAClearError(_ text: String) async throws {
    let fixture = try await Fixture(document(["ratio": "0.25"]))
    let config = fixture.config
    try await config.fetchAndActivate()
    fixture.serve(text)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }
    guard case .malformedJSON(let reason)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(reason.contains("out of range"))
    #expect(config[.ratio] == 0.25)
  }

  @Test func invalidUTF8IsRejectedNotRepaired() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Hello""#]))
    let config = fixture.config
    try await config.fetchAndActivate()
    var bytes = Data(#"{"welcome_title": "Caf"#.utf8)
    bytes.append(contentsOf: [0xC3, 0x28])  // an invalid two-byte sequence
    bytes.append(contentsOf: Data(#""}"#.utf8))
    fixture.server.setDocument(bytes, at: Fixture.path)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }
    guard case .malformedJSON(let reason)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(reason.contains("UTF-8"))
    #expect(config[.welcomeTitle] == "Hello")
  }

  @Test func aRestartFromTheCacheNeverChangesAValue() async throws {
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("cache.json")
    let text = document([
      "ratio": "1.7976931348623157e308", "max_items": "9007199254740993",
      "welcome_title": #""\u00e9t\u00e9 \ud83c\udf1e""#, "tags": #"["a", "b"]"#,
    ])
    let fixture = try await Fixture(text, cacheURL: cacheURL)
    try await fixture.config.fetchAndActivate()
    let restarted = RemoteConfig(cacheURL: cacheURL)
    #expect(restarted[.tags] == fixture.config[.tags])
    #expect(restarted[.ratio] == fixture.config[.ratio])
    #expect(restarted[.ratio] == 1.7976931348623157e308)
    #expect(restarted[.maxItems] == 9_007_199_254_740_993)
    #expect(restarted[.welcomeTitle] == "été 🌞")
  }
}
