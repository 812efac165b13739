import Foundation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherHTTP
import TetherRemoteConfig

@Suite struct FirebaseRealtimeTests {
  /// Short waits: a reconnection back-off of 50 to 500 ms, and fetches after an announcement
  /// 5 ms apart (the SDKs' 0.5 to 3 s is tested on its own, below).
  static let fast = settings(initialBackoff: 0.05, maximumBackoff: 0.5)

  static func settings(
    initialBackoff: TimeInterval = 120, maximumBackoff: TimeInterval = 3600,
    fetchDelay: Duration = .milliseconds(5)
  ) -> FirebaseRealtimeSettings {
    var settings = FirebaseRealtimeSettings(
      initialBackoff: initialBackoff, maximumBackoff: maximumBackoff)
    settings.announcementFetchDelay = Backoff(
      initial: fetchDelay, maximum: fetchDelay, multiplier: 1, jitter: .none)
    return settings
  }

  /// A config on a realtime source with the stream open and the first template, announced on
  /// the stream, fetched and active (no other fetch runs afterwards).
  static func connected(
    _ firebase: FirebaseFakeServer, settings: FirebaseRealtimeSettings = fast
  ) async throws -> (RemoteConfig, FirebaseConfigSource) {
    let source = firebaseSource(firebase, realtime: settings)
    let config = RemoteConfig(source: source)
    try await firebase.waitForRealtimeClients(1)
    try await waitUntil("the connected state") { source.realtimeState == .connected }
    firebase.publish(["welcome_title": "One"])
    try await waitUntil("the first template") { config[.welcomeTitle] == "One" }
    return (config, source)
  }

  @Test func aNotificationReachesUpdatesAndSharedReadersWithoutAPoll() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, _) = try await Self.connected(firebase)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    #expect(title == "One")
    let updates = Recorder(config.updates)
    #expect(!config.isPolling)

    firebase.publish(["welcome_title": "Two"])
    try await waitUntil("the realtime value") { title == "Two" }
    #expect(try await updates.waitForValues(1) == [ConfigUpdate(updatedKeys: ["welcome_title"])])
    #expect(config[.welcomeTitle] == "Two")

    // The project number in the path as in the body, as the SDKs send it; never the ID.
    let request = try #require(firebase.server.requests(at: firebase.realtimePath).first)
    #expect(request.path == "/v1/projects/1234567890/namespaces/firebase:streamFetchInvalidations")
    #expect(firebase.server.requests(at: firebase.realtimePathByProjectID).isEmpty)
    #expect(request.method == "POST")
    #expect(request.query == "key=\(firebase.apiKey)")
    #expect(request.header("X-Goog-Api-Key") == firebase.apiKey)
    #expect(request.header("X-Accept-Response-Streaming") == "true")
    #expect(request.header("X-Goog-Firebase-Installations-Auth")?.isEmpty == false)
    let body = try #require(
      try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
    #expect(body["project"] as? String == "1234567890")
    #expect(body["namespace"] as? String == "firebase")
    #expect(body["appId"] as? String == firebase.appID)
    #expect(body["lastKnownVersionNumber"] as? String == "0")
    #expect(
      body["appInstanceId"] as? String == firebase.fetchBody(0)?["app_instance_id"] as? String)
    // Both templates came by realtime fetches, none by a poll.
    let types = firebase.fetchRequests.compactMap { $0.header("X-Firebase-RC-Fetch-Type") }
    #expect(types == ["REALTIME/1", "REALTIME/1"])
  }

  // Guards: a stream sending change events without end called the config once per event (a
  // task and a fetch each): the process grew by 268 MB in 1.4 s. Announcements are coalesced
  // into at most one call per interval, the last one never lost.
  @Test func aFloodOfChangeEventsIsCoalesced() async throws {
    let firebase = try FirebaseFakeServer()
    let source = firebaseSource(firebase, realtime: Self.fast)
    let calls = Mutex(0)
    let observation = source.observeChanges { calls.withLock { $0 += 1 } }
    defer { observation?.cancel() }
    try await firebase.waitForRealtimeClients(1)
    try await waitUntil("the connected state") { source.realtimeState == .connected }
    // 20,000 ever newer versions, none fetched (no config fetches here): each is news.
    let events = 20_000
    for version in 1...events {
      firebase.sendRealtime(#"{"latestTemplateVersionNumber": \#(version)}"#)
    }
    // Sent after the flood, read after it: the connection has seen every event then.
    firebase.disableRealtime()
    try await waitUntil("every event read", timeout: .seconds(30)) {
      source.realtimeState == .disabled
    }
    // The trailing call comes at most one interval later.
    try await waitUntil("the trailing call") { calls.withLock { $0 } >= 2 }
    let count = calls.withLock { $0 }
    #expect(count <= 20, "\(count) calls for \(events) events")
  }

  @Test func aDroppedStreamReconnectsAndMissesNoVersion() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    let states = Recorder(source.realtimeStatePublisher)
    firebase.server.inject(.status(503), at: firebase.realtimePath, count: 2)
    firebase.dropRealtimeStreams()
    firebase.publish(["welcome_title": "Two"])  // while the client is away
    try await waitUntil("the version published while disconnected") {
      config[.welcomeTitle] == "Two"
    }
    firebase.publish(["welcome_title": "Three"])
    try await waitUntil("the next version on the new stream") { config[.welcomeTitle] == "Three" }
    #expect(source.realtimeState == .connected)
    let reasons = states.values.compactMap { state -> RemoteConfigError? in
      if case .waitingToReconnect(_, _, let reason?) = state { return reason }
      return nil
    }
    #expect(reasons.contains(.serverError(status: 503, retryAfter: nil)))
    #expect(firebase.server.requests(at: firebase.realtimePath).count >= 4)
  }

  @Test func aLaggingBackendIsFetchedThreeTimesEachAfterADelay() async throws {
    let firebase = try FirebaseFakeServer()
    let delay = Duration.milliseconds(150)
    let (config, _) = try await Self.connected(
      firebase, settings: Self.settings(initialBackoff: 0.05, fetchDelay: delay))
    let before = firebase.fetchRequests.count
    let updates = Recorder(config.updates)
    firebase.lagFetches(2)  // the first two attempts still get version 1
    let announced = ContinuousClock.now
    firebase.publish(["welcome_title": "Two"])
    try await waitUntil("the announced version") { config[.welcomeTitle] == "Two" }
    let fetches = Array(firebase.fetchRequests.dropFirst(before))
    #expect(
      fetches.map { $0.header("X-Firebase-RC-Fetch-Type") }
        == ["REALTIME/1", "REALTIME/2", "REALTIME/3"])
    // Each attempt waited its delay: the first after the announcement, each next one after
    // the previous answer.
    #expect(fetches[0].arrival - announced >= delay)
    #expect(fetches[1].arrival - fetches[0].arrival >= delay)
    #expect(fetches[2].arrival - fetches[1].arrival >= delay)
    // Listeners hear of the announced version only.
    #expect(try await updates.waitForValues(1) == [ConfigUpdate(updatedKeys: ["welcome_title"])])
  }

  @Test func afterThreeAttemptsTheNextPollIsAnOrdinaryFetch() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, _) = try await Self.connected(firebase)
    let before = firebase.fetchRequests.count
    firebase.lagFetches(3)  // every attempt the announcement starts gets version 1
    firebase.publish(["welcome_title": "Two"])
    try await firebase.server.waitForRequests(before + 3, at: firebase.fetchPath)
    _ = try? await config.fetch()  // joins the announcement's fetch while it runs
    #expect(config[.welcomeTitle] == "One")
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Two")
    let types = firebase.fetchRequests.dropFirst(before).map {
      $0.header("X-Firebase-RC-Fetch-Type")
    }
    #expect(Array(types.prefix(3)) == ["REALTIME/1", "REALTIME/2", "REALTIME/3"])
    #expect(types.last == "BASE/1")  // not delayed, not a fourth realtime attempt
  }

  @Test func theSDKsDelayBeforeAFetchAfterAnAnnouncementIsHalfASecondToThreeSeconds() {
    let delay = FirebaseRealtimeSettings().announcementFetchDelay
    #expect(delay.delay(afterFailures: 1, random: 0) == .milliseconds(500))
    #expect(delay.delay(afterFailures: 1, random: 1) == .seconds(3))
    // The same range for every attempt.
    #expect(delay.delay(afterFailures: 3, random: 1) == .seconds(3))
    #expect(FirebaseRealtimeSettings.announcementFetchAttempts == 3)
  }

  @Test func featureDisabledStopsRealtimeAndPollingContinues() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    firebase.disableRealtime()
    try await waitUntil("the disabled state") { source.realtimeState == .disabled }
    try await firebase.waitForRealtimeClientsToLeave()
    config.startPolling(every: .milliseconds(50))
    defer { config.stopPolling() }
    firebase.publish(["welcome_title": "Polled"])
    try await waitUntil("the polled value") { config[.welcomeTitle] == "Polled" }
    #expect(source.realtimeState == .disabled)
    #expect(firebase.server.requests(at: firebase.realtimePath).count == 1)
  }

  @Test(arguments: [400, 403, 404])
  func aStatusTheSDKsDoNotRetryStopsRealtime(status: Int) async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["welcome_title": "One"])
    let body = #"{"error":{"code":\#(status),"message":"Realtime is unavailable.","status":"X"}}"#
    firebase.server.injectPersistently(
      .status(status, body: Data(body.utf8)), at: firebase.realtimePath)
    let source = firebaseSource(firebase, realtime: Self.fast)
    let config = RemoteConfig(source: source)
    let expected = FirebaseRealtimeState.stopped(
      status == 403 ? .unauthorized(status: 403) : .unexpectedStatus(status))
    try await waitUntil("the stopped state") { source.realtimeState == expected }
    #expect(firebase.server.requests(at: firebase.realtimePath).count == 1)
    #expect(firebase.tokenRefreshCount == 0)  // a new token cannot help: none is asked for
    // Polling still works.
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "One")
    #expect(source.realtimeState == expected)
  }

  @Test func a401GetsOneNewTokenThenStopsRealtime() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.server.injectPersistently(.status(401), at: firebase.realtimePath)
    let source = firebaseSource(firebase, realtime: Self.fast)
    let config = RemoteConfig(source: source)
    try await waitUntil("the stopped state") {
      source.realtimeState == .stopped(.unauthorized(status: 401))
    }
    #expect(firebase.server.requests(at: firebase.realtimePath).count == 2)
    #expect(firebase.tokenRefreshCount == 1)
    withExtendedLifetime(config) {}
  }

  @Test func anErrorObjectOnTheStreamStopsRealtime() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    firebase.sendRealtime(
      #"{"error": {"code": 403, "message": "Realtime API is disabled.", "status": "X"}}"#)
    try await waitUntil("the stopped state") {
      source.realtimeState == .stopped(.unauthorized(status: 403))
    }
    try await firebase.waitForRealtimeClientsToLeave()
    #expect(firebase.server.requests(at: firebase.realtimePath).count == 1)
    withExtendedLifetime(config) {}
  }

  @Test func aFailedConnectionWaitsMinutesAsTheSDKs() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.server.injectPersistently(.status(503), at: firebase.realtimePath)
    let source = firebaseSource(firebase, realtime: Self.settings())
    let config = RemoteConfig(source: source)
    try await waitUntil("a reconnection a minute or more away") {
      guard case .waitingToReconnect(let until, 1, .serverError(503, _)?) = source.realtimeState
      else { return false }
      return until.timeIntervalSinceNow > 55
    }
    #expect(firebase.server.requests(at: firebase.realtimePath).count == 1)
    withExtendedLifetime(config) {}
  }

  @Test func theReconnectionScheduleIsTheSDKs() {
    var schedule = RealtimeReconnection(backoff: FirebaseRealtimeSettings().reconnectionBackoff)
    let now = Date()
    let failure = RemoteConfigError.serverError(status: 503, retryAfter: nil)
    // Failed connections: 1 to 2 minutes, then 2 to 4, doubling up to an hour.
    #expect(
      schedule.next(after: .failed(failure), now: now, random: 0)
        == .reconnect(after: .seconds(60), failures: 1, reason: failure))
    #expect(
      schedule.next(after: .failed(failure), now: now, random: 1)
        == .reconnect(after: .seconds(240), failures: 2, reason: failure))
    for _ in 0..<10 { _ = schedule.next(after: .failed(failure), now: now) }
    #expect(
      schedule.next(after: .failed(failure), now: now, random: 1)
        == .reconnect(after: .seconds(3600), failures: 13, reason: failure))
    // A stream that opened forgives the failures and, once it ends, reconnects within 1 s.
    schedule.connected()
    #expect(
      schedule.next(after: .ended(nil), now: now, random: 1)
        == .reconnect(after: .seconds(1), failures: 0, reason: nil))
    #expect(
      schedule.next(after: .failed(failure), now: now, random: 0)
        == .reconnect(after: .seconds(60), failures: 1, reason: failure))
    // Statuses that cannot be retried stop; featureDisabled disables.
    let forbidden = RemoteConfigError.unauthorized(status: 403)
    #expect(schedule.next(after: .refused(forbidden), now: now) == .stop(.stopped(forbidden)))
    #expect(schedule.next(after: .disabled, now: now) == .stop(.disabled))
    #expect(
      [400, 401, 403, 404, 500].allSatisfy { !RealtimeReconnection.isRetryable(status: $0) })
    #expect([408, 429, 502, 503, 504].allSatisfy(RealtimeReconnection.isRetryable(status:)))
  }

  @Test func retryIntervalSecondsHoldsBackTheNextReconnectionOnly() {
    var schedule = RealtimeReconnection(backoff: FirebaseRealtimeSettings().reconnectionBackoff)
    let now = Date()
    schedule.connected()
    schedule.retryInterval(seconds: 3600, at: now)
    // The next reconnection waits until the message's time plus the interval…
    guard
      case .reconnect(let wait, 0, nil) = schedule.next(
        after: .ended(nil), now: now.addingTimeInterval(600), random: 0)
    else {
      Issue.record("no reconnection")
      return
    }
    #expect(abs((wait - .seconds(3000)) / .milliseconds(1)) < 1)
    // …and the one after it follows the normal schedule again.
    #expect(
      schedule.next(after: .ended(nil), now: now.addingTimeInterval(4000), random: 1)
        == .reconnect(after: .seconds(1), failures: 0, reason: nil))
  }

  @Test func retryIntervalSecondsDelaysTheReconnection() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    firebase.sendRetryInterval(seconds: 30)
    firebase.dropRealtimeStreams()
    try await waitUntil("a reconnection at least 30 s away") {
      guard case .waitingToReconnect(let until, _, _) = source.realtimeState else { return false }
      return until.timeIntervalSinceNow > 20
    }
    withExtendedLifetime(config) {}
  }

  @Test func retryIntervalSecondsAppliesToOneReconnection() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    // Each state with the time it was published: a wait's `until` minus that time is the delay
    // the source chose, which a loaded machine can only shorten, never lengthen.
    let states = Recorder(
      source.realtimeStatePublisher.map { (state: $0, published: Date()) }.eraseToAnyPublisher())
    let sent = Date()
    firebase.sendRetryInterval(seconds: 1)
    firebase.dropRealtimeStreams()
    // The first reconnection waits the server's second…
    try await firebase.waitForRealtimeClients(1)
    try await waitUntil("the connected state") { source.realtimeState == .connected }
    firebase.dropRealtimeStreams()
    // …the next one does not.
    try await firebase.waitForRealtimeClients(1)
    try await waitUntil("the connected state") { source.realtimeState == .connected }
    let waits = states.values.compactMap { entry -> TimeInterval? in
      guard case .waitingToReconnect(let until, _, _) = entry.state else { return nil }
      return until.timeIntervalSince(entry.published)
    }
    #expect(waits.count == 2)
    let requests = firebase.server.requests(at: firebase.realtimePath)
    #expect(requests.count == 3)
    #expect(requests[1].date.timeIntervalSince(sent) >= 0.95)
    // The second reconnection was scheduled after the ordinary wait (at most 50 ms here), not
    // the server's second. (Not the gap between arrivals: on two loaded cores a continuation
    // can resume a second or more late, which says nothing about the schedule.)
    #expect(waits.count == 2 && waits[1] < 0.5, "the second reconnection waited \(waits)")
    withExtendedLifetime(config) {}
  }

  @Test func unconfiguringTheSourceClosesTheStream() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    config.configure(source: nil)
    try await firebase.waitForRealtimeClientsToLeave()
    #expect(source.realtimeState == .off)
  }
}
