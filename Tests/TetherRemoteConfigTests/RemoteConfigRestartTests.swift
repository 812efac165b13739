import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

/// What a server restarted from its cache reports, and how a failed poll is seen.
@Suite struct RemoteConfigRestartTests {
  @Test func aRestartFromTheCacheSaysSoAndWhenTheNextFetchIsAllowed() async throws {
    try await withTemporaryDirectory { directory in
      let cacheURL = directory.file("remote-config.json")
      let fixture = try await Fixture(document(["max_items": "7"]), cacheURL: cacheURL)
      try await fixture.config.fetchAndActivate()
      let fetchedAt = try #require(fixture.config.lastFetchTime)

      // The restarted process: same cache, same source, default 12-hour interval.
      let restarted = RemoteConfig(source: fixture.source, cacheURL: cacheURL)
      #expect(restarted.lastFetchStatus == .cached)
      #expect(restarted[.maxItems] == 7)
      let next = try #require(restarted.nextFetchDate)
      #expect(abs(next.timeIntervalSince(fetchedAt) - 12 * 60 * 60) < 1)

      // A short interval (what a server should choose) lets the next fetch go out at once.
      let eager = RemoteConfig(
        source: fixture.source, settings: RemoteConfigSettings(minimumFetchInterval: 0),
        cacheURL: cacheURL)
      #expect(eager.lastFetchStatus == .cached)
      #expect(eager.nextFetchDate == nil)
      fixture.serve(document(["max_items": "8"]))
      #expect(try await eager.fetchAndActivate())
      #expect(eager.lastFetchStatus == .success)
      #expect(eager[.maxItems] == 8)
    }
  }

  @Test func withoutACacheNoFetchYetAndTheFirstFetchIsDue() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    #expect(fixture.config.lastFetchStatus == .noFetchYet)
    #expect(fixture.config.nextFetchDate == nil)
  }

  @Test func aFailedPollIsPublished() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let failures = Recorder(fixture.config.fetchErrorPublisher)
    fixture.server.inject(.status(503), at: Fixture.path)
    fixture.config.startPolling(every: .milliseconds(10))
    defer { fixture.config.stopPolling() }
    let errors = try await failures.waitForValues(1, "a failed poll")
    #expect(errors.first == .serverError(status: 503, retryAfter: nil))
  }
}
