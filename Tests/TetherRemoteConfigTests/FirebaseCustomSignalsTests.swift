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
