import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

/// A `FirebaseConfigSource` pointed at `firebase`.
func firebaseSource(
  _ firebase: FirebaseFakeServer, customSignals: [String: JSONValue] = [:],
  realtime: FirebaseRealtimeSettings? = nil, throttleBackoff: TimeInterval = 60
) -> FirebaseConfigSource {
  FirebaseConfigSource(
    apiKey: firebase.apiKey, projectID: firebase.projectID, appID: firebase.appID,
    customSignals: customSignals,
    app: FirebaseAppInfo(appVersion: "2.4.0", appBuild: "418", packageName: "com.example.tool"),
    realtime: realtime, throttleBackoff: throttleBackoff,
    endpoints: .all(at: firebase.baseURL))
}

@Suite struct FirebaseConfigSourceTests {
  static let entries = ["welcome_title": "Hello", "max_items": "20", "new_checkout": "true"]

  @Test func aFetchRegistersAnInstallationAndSendsTheSDKsRequestShape() async throws {
    let firebase = try FirebaseFakeServer()
    let version = firebase.publish(Self.entries)
    let source = firebaseSource(firebase, customSignals: ["plan": "free", "seats": 3])
    let config = RemoteConfig(source: source, settings: RemoteConfigSettings(fetchTimeout: 10))
    #expect(try await config.fetchAndActivate())
    #expect(config[.welcomeTitle] == "Hello")
    #expect(config[.maxItems] == 20)  // Firebase sends "20": the typed key decodes it
    #expect(config[.newCheckout] == true)
    #expect(config.lastFetchStatus == .success)

    let register = try #require(firebase.server.requests(at: firebase.installationsPath).first)
    #expect(register.header("x-goog-api-key") == firebase.apiKey)
    let registration = try #require(
      try JSONSerialization.jsonObject(with: register.body) as? [String: Any])
    let fid = try #require(registration["fid"] as? String)
    #expect(fid.count == 22)
    #expect("cdef".contains(fid.first!))  // the first four bits are 0111
    #expect(registration["authVersion"] as? String == "FIS_v2")
    #expect(registration["appId"] as? String == firebase.appID)
    #expect(await source.installationID == fid)

    let fetch = try #require(firebase.fetchRequests.first)
    #expect(fetch.method == "POST")
    #expect(fetch.query == "key=\(firebase.apiKey)")
    #expect(fetch.header("If-None-Match") == "*")
    #expect(fetch.header("Content-Type") == "application/json")
    #expect(fetch.header("X-Firebase-RC-Fetch-Type") == "BASE/1")
    #expect(fetch.header("X-Goog-Firebase-Installations-Auth")?.isEmpty == false)
    // The fetch's header set is the Firebase SDKs' own, plus what HTTP itself
    // needs; nothing else is sent.
    let names = Set(fetch.headerFields.map { $0.name.lowercased() })
    #expect(
      names == [
        "host", "content-length", "user-agent", "accept-encoding", "content-type",
        "if-none-match", "x-goog-firebase-installations-auth", "x-firebase-rc-fetch-type",
      ])
    let body = try #require(firebase.fetchBody())
    #expect(body["app_instance_id"] as? String == fid)
    #expect(
      body["app_instance_id_token"] as? String == fetch.header("X-Goog-Firebase-Installations-Auth")
    )
    #expect(body["app_id"] as? String == firebase.appID)
    #expect(body["app_version"] as? String == "2.4.0")
    #expect(body["app_build"] as? String == "418")
    #expect(body["package_name"] as? String == "com.example.tool")
    #expect(body["sdk_version"] as? String == FirebaseConfigSource.sdkVersion)
    #expect(body["time_zone"] is String)
    let signals = try #require(body["custom_signals"] as? [String: Any])
    #expect(signals["plan"] as? String == "free")
    #expect(signals["seats"] as? String == "3")  // a map of strings, as every SDK sends it
    #expect(config.configValue(forKey: "max_items").source == .remote)
    #expect(config.configValue(forKey: "max_items").stringValue == "20")
    #expect(version == 1)
  }

  @Test func aRestartReusesTheInstallationAndTheCachedETag() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("remote-config.json")
    do {
      let config = RemoteConfig(source: firebaseSource(firebase), cacheURL: cacheURL)
      try await config.fetchAndActivate()
    }
    #expect(firebase.registrationCount == 1)
    let installationFile = directory.file("remote-config.json.firebase-installation")
    #expect(FileManager.default.fileExists(atPath: installationFile.path))
    let mode =
      try FileManager.default.attributesOfItem(atPath: installationFile.path)[
        .posixPermissions] as? Int
    #expect(mode == 0o600)

    let source = firebaseSource(firebase)
    let restarted = RemoteConfig(source: source, cacheURL: cacheURL)
    #expect(restarted.lastFetchStatus == .cached)
    #expect(restarted[.welcomeTitle] == "Hello")
    restarted.isStale = true
    #expect(try await restarted.fetchAndActivate() == false)
    #expect(firebase.registrationCount == 1)
    #expect(firebase.tokenRefreshCount == 0)
    let bodies = [firebase.fetchBody(0), firebase.fetchBody(1)]
    #expect(bodies[0]?["app_instance_id"] as? String == bodies[1]?["app_instance_id"] as? String)
    #expect(firebase.fetchRequests[1].header("If-None-Match")?.hasPrefix("etag-") == true)
  }

  @Test func anExpiredAuthTokenIsRefreshedAndTheFetchRetriedOnce() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    firebase.expireAuthTokens()
    firebase.publish(["welcome_title": "Refreshed"])
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Refreshed")
    #expect(firebase.tokenRefreshCount == 1)
    #expect(firebase.registrationCount == 1)
    let fetches = firebase.fetchRequests
    #expect(fetches.count == 3)  // the first fetch, the refused one, its one retry
    #expect(
      fetches[1].header("X-Goog-Firebase-Installations-Auth")
        != fetches[2].header("X-Goog-Firebase-Installations-Auth"))
    // The body is built once per installation token and reused: the retry's is rebuilt.
    let tokens = (1...2).map { firebase.fetchBody($0)?["app_instance_id_token"] as? String }
    #expect(tokens[0] != tokens[1])
    #expect(tokens[1] == fetches[2].header("X-Goog-Firebase-Installations-Auth"))
  }

  @Test func aTokenNearItsExpiryIsRefreshedBeforeTheFetch() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    firebase.setAuthTokenLifetime(seconds: 30 * 60)  // inside the one-hour refresh margin
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    #expect(firebase.tokenRefreshCount == 0)
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(firebase.tokenRefreshCount == 1)
    #expect(firebase.fetchRequests.count == 2)  // no refused fetch: refreshed beforehand
    #expect(
      firebase.fetchRequests[0].header("X-Goog-Firebase-Installations-Auth")
        != firebase.fetchRequests[1].header("X-Goog-Firebase-Installations-Auth"))
  }

  @Test func aRefusedRetryIsUnauthorizedAfterOneRetry() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let config = RemoteConfig(source: firebaseSource(firebase))
    firebase.server.inject(
      .status(403, body: #"{"error":{"code":403,"status":"PERMISSION_DENIED"}}"#),
      at: firebase.fetchPath, count: 2)
    await #expect(throws: RemoteConfigError.unauthorized(status: 403)) {
      try await config.fetchAndActivate()
    }
    #expect(firebase.fetchRequests.count == 2)
    #expect(firebase.tokenRefreshCount == 1)
  }

  @Test func aDeletedInstallationRegistersAgain() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    firebase.deleteInstallations()
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(firebase.registrationCount == 2)
    #expect(config.lastFetchStatus == .success)
  }

  @Test func a429WithBackoffReportsThrottledUntilItsEnd() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let source = firebaseSource(firebase, throttleBackoff: 4)  // 2 to 4 s, jittered
    let config = RemoteConfig(source: source)
    firebase.server.inject(.status(429), at: firebase.fetchPath)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(config.lastFetchStatus == .throttled)
    guard case .throttled(429, let retryAfter?)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(retryAfter >= 2 && retryAfter <= 4)
    let end = try #require(source.throttledUntil)
    #expect(try #require(config.nextFetchDate) >= end.addingTimeInterval(-0.05))

    // Inside the back-off: throttled again, without a request.
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(config.lastFetchStatus == .throttled)
    #expect(firebase.fetchRequests.count == 1)

    // After it: the next fetch reaches the server.
    try await waitUntil("the end of the back-off", timeout: .seconds(30)) {
      (try? await config.fetch()) != nil
    }
    #expect(Date() >= end)
    #expect(firebase.fetchRequests.count == 2)
    #expect(config.lastFetchStatus == .success)
    #expect(source.throttledUntil == nil)
  }

  @Test(arguments: [503, 504, 500])
  func serverFailuresBackOffLikeThrottling(status: Int) async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let source = firebaseSource(firebase, throttleBackoff: 30)
    let config = RemoteConfig(source: source)
    firebase.server.inject(.status(status), at: firebase.fetchPath)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(config.lastFetchStatus == .throttled)
    #expect(source.throttledUntil.map { $0 > Date().addingTimeInterval(10) } == true)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(firebase.fetchRequests.count == 1)
  }

  @Test func aNetworkFailureDoesNotExtendTheBackoff() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let source = firebaseSource(firebase, throttleBackoff: 0.2)
    let config = RemoteConfig(source: source)
    firebase.server.inject(.status(429), at: firebase.fetchPath)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    try await waitUntil("the end of the back-off") {
      source.throttledUntil == nil && (config.nextFetchDate.map { $0 <= Date() } ?? true)
    }

    // A connection that dies mid-answer (a reset before the head makes the transport wait for
    // its timeout on a reused connection; see the report).
    firebase.server.inject(.truncatedBody(sending: 10), at: firebase.fetchPath)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    #expect(config.lastFetchStatus == .failure)
    #expect(source.throttledUntil == nil)
    // No back-off: the very next fetch goes to the server and succeeds.
    try await config.fetchAndActivate()
    #expect(firebase.fetchRequests.count == 3)
    #expect(config[.welcomeTitle] == "Hello")
  }

  enum NotModified: String, CaseIterable, Sendable { case noChangeState, status304 }

  @Test(arguments: NotModified.allCases)
  func notModifiedAnswersKeepTheValues(_ answer: NotModified) async throws {
    let firebase = try FirebaseFakeServer()
    firebase.answerNotModified(with: answer == .status304 ? .status304 : .noChangeState)
    firebase.publish(Self.entries)
    let config = RemoteConfig(source: firebaseSource(firebase))
    let updates = Recorder(config.updates)
    try await config.fetchAndActivate()
    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    #expect(config.lastFetchStatus == .success)
    #expect(config[.welcomeTitle] == "Hello")
    #expect(config[.maxItems] == 20)
    let second = try #require(firebase.fetchRequests.last)
    #expect(second.header("If-None-Match")?.hasPrefix("etag-1234567890-firebase-fetch-v1") == true)
    try await updates.waitForValues(1)
    #expect(updates.values.count == 1)
  }

  @Test func anOlderTemplateIsNeverApplied() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["welcome_title": "One"])
    firebase.publish(["welcome_title": "Two"])
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Two")
    firebase.lagFetches(1)  // a lagging backend still serves version 1
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Two")
  }

  @Test func anEmptyProjectIsAnEmptyConfig() async throws {
    let firebase = try FirebaseFakeServer()
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    #expect(config.activeKeys.isEmpty)
    #expect(config[.welcomeTitle] == "Welcome")
  }

  @Test func valuesThatDoNotDecodeAreTypedErrorsAndFallBack() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish([
      "max_items": "lots", "new_checkout": "maybe", "banner": #"{"title":"Sale","priority":2}"#,
      "theme": "dark",
    ])
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 10)
    #expect(config[.newCheckout] == false)
    #expect(config[.banner] == Banner(title: "Sale", priority: 2))
    #expect(config[.theme] == .dark)
    let failed = Set(config.decodeErrors.map(\.key))
    #expect(failed == ["max_items", "new_checkout"])
  }

  @Test func a200CarryingAnErrorIsAFailedFetchNotAnEmptyTemplate() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(Self.entries)
    let config = RemoteConfig(source: firebaseSource(firebase))
    try await config.fetchAndActivate()
    firebase.server.inject(
      .status(
        200,
        body: #"{"error":{"code":403,"message":"Permission denied.","status":"PERMISSION_DENIED"}}"#
      ),
      at: firebase.fetchPath)
    config.isStale = true
    let expected = RemoteConfigError.source(
      FirebaseConfigSourceError.serviceError(
        code: 403, status: "PERMISSION_DENIED", message: "Permission denied."))
    await #expect(throws: expected) { try await config.fetchAndActivate() }
    #expect(config.lastFetchStatus == .failure)
    #expect(config.lastError == expected)
    #expect(config.activeKeys == Set(Self.entries.keys))  // not emptied
    #expect(config[.welcomeTitle] == "Hello")
  }

  @Test func aBadAPIKeyIsAClearError() async throws {
    let firebase = try FirebaseFakeServer()
    let source = FirebaseConfigSource(
      apiKey: "wrong", projectID: firebase.projectID, appID: firebase.appID,
      endpoints: .all(at: firebase.baseURL))
    let config = RemoteConfig(source: source)
    await #expect(throws: RemoteConfigError.unexpectedStatus(400)) {
      try await config.fetchAndActivate()
    }
    #expect("\(config.lastError!)".contains("wrong") == false)
  }
}
