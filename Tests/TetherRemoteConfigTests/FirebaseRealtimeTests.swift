import Foundation
import TestSupport
import Testing
import Tether
import TetherRemoteConfig

@Suite struct FirebaseRealtimeTests {
  static let fast = FirebaseRealtimeSettings(initialBackoff: 0.05, maximumBackoff: 0.5)

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

    let request = try #require(firebase.server.requests(at: firebase.realtimePath).first)
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

  @Test func aLaggingBackendIsFetchedUntilTheAnnouncedVersionArrives() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, _) = try await Self.connected(firebase)
    firebase.lagFetches(1)
    firebase.publish(["welcome_title": "Two"])
    try await waitUntil("the announced version") { config[.welcomeTitle] == "Two" }
    let types = firebase.fetchRequests.compactMap { $0.header("X-Firebase-RC-Fetch-Type") }
    #expect(types.contains("REALTIME/2"))
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

  @Test func unconfiguringTheSourceClosesTheStream() async throws {
    let firebase = try FirebaseFakeServer()
    let (config, source) = try await Self.connected(firebase)
    config.configure(source: nil)
    try await firebase.waitForRealtimeClientsToLeave()
    #expect(source.realtimeState == .off)
  }
}
