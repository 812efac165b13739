import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

@Suite struct FirebaseCustomSignalsTests {
  static let proPlan = FirebaseFakeServer.Condition(
    signal: "plan", equals: "pro", values: ["max_items": "50"])

  @Test func settingSignalsMakesTheNextFetchBypassTheETagAndTheInterval() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["max_items": "20", "welcome_title": "Hi"], conditions: [Self.proPlan])
    let source = firebaseSource(firebase, customSignals: ["plan": "free"])
    // The default 12-hour minimum fetch interval.
    let config = RemoteConfig(source: source)
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 20)
    try await config.fetchAndActivate()
    #expect(firebase.fetchRequests.count == 1)  // inside the interval: no request

    try source.setCustomSignals(["plan": "pro"])
    #expect(config.isStale)
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 50)
    let fetches = firebase.fetchRequests
    #expect(fetches.count == 2)
    #expect(fetches[1].header("If-None-Match") == "*")
    let signals = firebase.fetchBody(1)?["custom_signals"] as? [String: Any]
    #expect(signals?["plan"] as? String == "pro")

    // Unchanged signals: the interval and the ETag apply again.
    try source.setCustomSignals(["plan": "pro"])
    try await config.fetchAndActivate()
    #expect(firebase.fetchRequests.count == 2)
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(firebase.fetchRequests.last?.header("If-None-Match")?.hasPrefix("etag-") == true)
  }

  @Test func numericSignalsAreSentAsStringsAndMatchNumericConditions() async throws {
    let firebase = try FirebaseFakeServer()
    let veteran = FirebaseFakeServer.Condition(
      signal: "level", equals: "5", values: ["max_items": "99"])
    let beta = FirebaseFakeServer.Condition(
      signal: "ratio", equals: "0.25", values: ["welcome_title": "Beta"])
    firebase.publish(["max_items": "20", "welcome_title": "Hi"], conditions: [veteran, beta])
    let source = firebaseSource(firebase, customSignals: ["level": 5, "ratio": 0.25])
    let config = RemoteConfig(source: source)
    // Google's service answers 400 to a number here: the fetch must succeed.
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 99)
    #expect(config[.welcomeTitle] == "Beta")
    let signals = try #require(firebase.fetchBody()?["custom_signals"] as? [String: Any])
    #expect(signals["level"] as? String == "5")
    #expect(signals["ratio"] as? String == "0.25")

    try source.setCustomSignals(["level": .double(4)])
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 20)
    #expect((firebase.fetchBody()?["custom_signals"] as? [String: Any])?["level"] as? String == "4")
    #expect(config.lastError == nil)
  }

  @Test func theFakeRejectsANonStringSignalAsGooglesServiceDoes() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["max_items": "20"])
    // A conforming fetch first, to hold a valid installation token.
    try await RemoteConfig(source: firebaseSource(firebase)).fetchAndActivate()
    let fetch = try #require(firebase.fetchRequests.first)
    var body = try #require(firebase.fetchBody(0))
    body["custom_signals"] = ["level": 5]
    let json = try JSONSerialization.data(withJSONObject: body)
    let client = try LoopbackClient(port: firebase.server.port)
    defer { client.close() }
    let head =
      "POST \(firebase.fetchPath)?key=\(firebase.apiKey) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      + "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n"
      + "X-Goog-Firebase-Installations-Auth: "
      + "\(fetch.header("X-Goog-Firebase-Installations-Auth") ?? "")\r\n"
      + "Connection: close\r\n\r\n"
    try client.send(Data(head.utf8) + json)
    let response = try await client.readResponse()
    #expect(response.head.status == 400)
    #expect(String(decoding: response.body, as: UTF8.self).contains("INVALID_ARGUMENT"))
  }

  @Test func nullRemovesASignal() async throws {
    let firebase = try FirebaseFakeServer()
    firebase.publish(["max_items": "20"], conditions: [Self.proPlan])
    let source = firebaseSource(firebase, customSignals: ["plan": "pro", "region": "eu"])
    let config = RemoteConfig(source: source)
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 50)
    try source.setCustomSignals(["plan": .null])
    #expect(source.customSignals == ["region": "eu"])
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 20)
  }

  @Test(arguments: [
    ("", JSONValue.string("x")),
    (String(repeating: "k", count: 251), .string("x")),
    ("long", .string(String(repeating: "v", count: 501))),
    ("flag", .bool(true)),
    ("list", .array([.int(1)])),
  ])
  func invalidSignalsAreRejectedAndLoseNothing(key: String, value: JSONValue) throws {
    let source = FirebaseConfigSource(
      apiKey: "k", projectID: "p", appID: "1:1:web:a", customSignals: ["plan": "pro"])
    #expect {
      try source.setCustomSignals(["ok": "fine", key: value])
    } throws: { error in
      guard case FirebaseConfigSourceError.invalidCustomSignal(let named, _) = error else {
        return false
      }
      return named == key
    }
    #expect(source.customSignals == ["plan": "pro"])
  }

  @Test func moreThanAHundredSignalsAreRejected() throws {
    let source = FirebaseConfigSource(apiKey: "k", projectID: "p", appID: "1:1:web:a")
    var signals: [String: JSONValue] = [:]
    for index in 0..<101 { signals["s\(index)"] = .int(index) }
    #expect(throws: FirebaseConfigSourceError.self) { try source.setCustomSignals(signals) }
    #expect(source.customSignals.isEmpty)
  }
}

/// The signals as a value: the pending change that bypasses the ETag, and the wire form.
extension FirebaseCustomSignalsTests {
  @Test func aChangeIsPendingUntilTheServerAnswersAFetchThatCarriedIt() throws {
    var signals = FirebaseCustomSignals(validAmong: ["plan": "free"])
    #expect(signals.generation == 0 && !signals.changePending)
    #expect(try signals.merge(["plan": "free"]) == false)  // the same value: no change
    #expect(signals.generation == 0 && !signals.changePending)
    #expect(try signals.merge(["plan": "pro"]))
    let sent = signals.generation
    // Changed again while that fetch was out: its answer leaves the newer change pending.
    #expect(try signals.merge(["seats": 3]))
    signals.reachedServer(generation: sent)
    #expect(signals.changePending)
    signals.reachedServer(generation: signals.generation)
    #expect(!signals.changePending)
    #expect(signals.values == ["plan": "pro", "seats": 3])
  }

  @Test func theFetchFieldSendsEveryValueAsText() {
    let signals = FirebaseCustomSignals(validAmong: [
      "plan": "pro", "seats": 5, "whole": 2.0, "ratio": 2.5, "huge": 1e20, "debt": -3,
    ])
    #expect(
      signals.fetchField == [
        "plan": "pro", "seats": "5", "whole": "2", "ratio": "2.5", "huge": "1e+20", "debt": "-3",
      ])
  }

  @Test func invalidInitialSignalsAreLeftOut() {
    let signals = FirebaseCustomSignals(validAmong: [
      "plan": "pro", "flag": true, "infinite": .double(.infinity),
      "long": .string(String(repeating: "v", count: 501)),
    ])
    #expect(signals.values == ["plan": "pro"])
  }

  @Test func aMergeOverAHundredSignalsChangesNothing() {
    var signals = FirebaseCustomSignals(validAmong: [:])
    var many: [String: JSONValue] = [:]
    for index in 0..<101 { many["s\(index)"] = .int(index) }
    #expect(
      throws: FirebaseConfigSourceError.invalidCustomSignal(
        key: "s0", reason: "at most 100 signals")
    ) {
      _ = try signals.merge(many)
    }
    #expect(signals.values.isEmpty && signals.generation == 0 && !signals.changePending)
  }
}
