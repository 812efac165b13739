import Foundation
import TestSupport
import Testing
import Tether
import TetherRemoteConfig

@Suite struct RemoteConfigPollingTests {
  @Test func liveUpdatesArriveWithinOnePollInterval() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""First""#]))
    let config = fixture.config
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    let values = Recorder(config.values(for: .welcomeTitle))
    let updates = Recorder(config.updates)
    let interval = Duration.milliseconds(200)
    config.startPolling(every: interval)
    defer { config.stopPolling() }
    #expect(config.isPolling)
    try await waitUntil("the first poll") { title == "First" }
    #expect(try await values.waitForValues(2) == ["Welcome", "First"])

    // Counted in polls, not seconds: a loaded parallel run can stall every task for
    // seconds, which delays the polls and the delivery alike. The poll that first sees the
    // new document delivers it; one more may already be on its way when the value lands.
    let pollsBefore = fixture.server.requestCount(at: Fixture.path)
    fixture.serve(document(["welcome_title": #""Second""#]))
    try await waitUntil("the new title") { title == "Second" }
    #expect(fixture.server.requestCount(at: Fixture.path) - pollsBefore <= 2)
    #expect(try await values.waitForValues(3).last == "Second")
    #expect(try await updates.waitForValues(2).last == ConfigUpdate(updatedKeys: ["welcome_title"]))
  }

  @Test func unchangedPollsAreConditionalAndEmitNothing() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    let updates = Recorder(config.updates)
    config.startPolling(every: .milliseconds(20))
    try await fixture.server.waitForRequests(4, at: Fixture.path)
    config.stopPolling()
    let requests = fixture.server.requests(at: Fixture.path)
    let etag = fixture.server.document(at: Fixture.path)?.etag
    #expect(requests.dropFirst().allSatisfy { $0.header("If-None-Match") == etag })
    #expect(updates.values == [ConfigUpdate(updatedKeys: ["max_items"])])
    #expect(config.lastFetchStatus == .success)
  }

  @Test func pollingBacksOffOnFailuresAndRecovers() async throws {
    let fixture = try await Fixture(
      document(["max_items": "1"]),
      settings: RemoteConfigSettings(fetchTimeout: 5, backoffJitter: false))
    let config = fixture.config
    fixture.server.inject(.status(500), at: Fixture.path, count: 4)
    let interval = 0.02
    config.startPolling(every: .milliseconds(20))
    defer { config.stopPolling() }
    // 4 failures, then successes at the normal interval again.
    try await waitUntil("recovery") { config[.maxItems] == 1 }
    #expect(config.lastFetchStatus == .success)
    #expect(config.lastError == nil)
    let requests = try await fixture.server.waitForRequests(11, at: Fixture.path)
    let gaps = zip(requests, requests.dropFirst()).map { pair in
      let duration = pair.1.arrival - pair.0.arrival
      return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
    // After failure k the wait is interval * 2^k: 40, 80, 160, 320 ms.
    for k in 1...4 {
      #expect(gaps[k - 1] >= interval * Double(1 << k) * 0.9, "gap \(k): \(gaps)")
    }
    // Healthy again: back to the poll interval (20 ms), not on with the back-off, whose sixth
    // wait would be 20.48 s (640 ms, 1.28 s, ... doubling). Each healthy gap stays far below
    // that even when the loaded machine delays polls by seconds (a CI run on two cores saw
    // gaps of 1.2-6.5 s while every test around it stalled).
    let healthy = gaps[4...]
    #expect(healthy.allSatisfy { $0 < 15 }, "gaps: \(gaps)")
  }

  @Test func pollingWaitsOutRetryAfter() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    fixture.server.inject(.status(503, retryAfter: .seconds(1)), at: Fixture.path)
    config.startPolling(every: .milliseconds(20))
    defer { config.stopPolling() }
    let requests = try await fixture.server.waitForRequests(2, at: Fixture.path)
    #expect(requests[1].arrival - requests[0].arrival >= .milliseconds(950))
    try await waitUntil("recovery") { config[.maxItems] == 1 }
  }

  @Test func aRefusalAnsweredAtOnceStillStopsPollingEveryTime() async throws {
    // The first poll may end before `startPolling` returns: it must still stop the polling
    // (it once left `isPolling` true for good, about one run in five under TSan).
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    fixture.server.injectPersistently(.status(401), at: Fixture.path)
    for round in 1...300 {
      config.startPolling(every: .milliseconds(20))
      try await waitUntil("polling to stop, round \(round)") { !config.isPolling }
    }
    #expect(fixture.requestCount >= 300)
  }

  @Test(arguments: [401, 403])
  func unauthorizedStopsPolling(status: Int) async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    fixture.server.injectPersistently(.status(status), at: Fixture.path)
    config.startPolling(every: .milliseconds(20))
    do {
      try await waitUntil("polling to stop") { !config.isPolling }
    } catch {
      let lastError = String(describing: config.lastError)
      Issue.record("still polling after \(fixture.requestCount) requests; last: \(lastError)")
      throw error
    }
    #expect(fixture.requestCount == 1)
    #expect(config.lastFetchStatus == .failure)
    guard case .unauthorized(status)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    // A single refused fetch ran no polling: the text does not claim that polling stopped.
    #expect(config.lastError?.description.contains("polling, if it was running, stops") == true)
  }
}
