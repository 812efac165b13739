import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

extension ConfigKeys {
  fileprivate static let rolloutPercent = ConfigKey<Int>("rollout_percent", default: 5)
}

@Suite struct OFREPConfigSourceTests {
  static func responder() -> OFREPResponder {
    let flags = OFREPResponder(bearerToken: "t0ken")
    flags.setFlag(
      "new_checkout", variants: ["on": "true", "off": "false"], defaultVariant: "off",
      targeting: [OFREPResponder.Rule(attribute: "plan", equals: "pro", variant: "on")],
      metadata: ["owner": "payments"])
    flags.setFlag("max_items", variants: ["few": "3", "many": "50"], defaultVariant: "many")
    flags.failFlag("theme", errorCode: "GENERAL")
    return flags
  }

  @Test func bulkEvaluationWithContextExposesValuesVariantsAndReasons() async throws {
    let server = try TestHTTPServer()
    server.serve(Self.responder())
    let config = RemoteConfig(
      source: OFREPConfigSource(
        baseURL: server.baseURL,
        context: ["targetingKey": .string("user-42"), "plan": .string("pro")],
        headers: ["Authorization": "Bearer t0ken"]))
    try await config.fetchAndActivate()
    #expect(config[.newCheckout] == true)
    #expect(config[.maxItems] == 50)
    #expect(config[.theme] == .light)  // failed evaluation: the default

    let checkout = config.configValue(forKey: "new_checkout")
    #expect(checkout.source == .remote)
    #expect(checkout.variant == "on")
    #expect(checkout.reason == "TARGETING_MATCH")
    #expect(checkout.evaluation?.metadata["owner"] == .string("payments"))
    #expect(config.configValue(forKey: "max_items").reason == "STATIC")

    let request = try #require(server.requests(at: OFREPResponder.path).first)
    #expect(request.method == "POST")
    let body = try JSONSerialization.jsonObject(with: request.body) as? [String: Any]
    let context = body?["context"] as? [String: Any]
    #expect(context?["targetingKey"] as? String == "user-42")
    #expect(context?["plan"] as? String == "pro")
  }

  @Test func aFlagTheServiceCouldNotEvaluateKeepsTheDefaultAndShowsTheError() async throws {
    let server = try TestHTTPServer()
    let flags = Self.responder()
    flags.setRolloutFlag("rollout_percent", value: "40")
    server.serve(flags)
    // No targetingKey in the context: the rollout cannot be evaluated.
    let config = RemoteConfig(
      source: OFREPConfigSource(
        baseURL: server.baseURL, context: ["plan": .string("pro")],
        headers: ["Authorization": "Bearer t0ken"]))
    try await config.fetchAndActivate()
    #expect(config[.rolloutPercent] == 5)

    let byName = config.configValue(forKey: "rollout_percent")
    #expect(byName.source == .static)
    #expect(byName.reason == "ERROR")
    #expect(byName.evaluation?.errorCode == "TARGETING_KEY_MISSING")
    #expect(byName.evaluation?.errorDetails?.contains("targetingKey") == true)
    let byKey = config.configValue(for: .rolloutPercent)
    #expect(byKey.source == .default)
    #expect(byKey.raw == .int(5))
    #expect(byKey.evaluation == byName.evaluation)
    // A default from setDefaults keeps the evaluation too.
    try config.setDefaults(["rollout_percent": 10])
    #expect(
      config.configValue(forKey: "rollout_percent").evaluation?.errorCode
        == "TARGETING_KEY_MISSING")
    #expect(config[.rolloutPercent] == 10)
    // A flag that was evaluated has its evaluation on both lookups as well.
    #expect(config.configValue(for: .newCheckout).variant == "on")
    #expect(config.configValue(for: .newCheckout).source == .remote)
    let theme = config.configValue(for: .theme)
    #expect(theme.evaluation?.errorCode == "GENERAL")
    #expect(theme.raw == .string("light"))
  }

  @Test func aTargetingKeyLetsTheRolloutEvaluate() async throws {
    let server = try TestHTTPServer()
    let flags = Self.responder()
    flags.setRolloutFlag("rollout_percent", value: "40")
    server.serve(flags)
    let config = RemoteConfig(
      source: OFREPConfigSource(
        baseURL: server.baseURL, context: ["targetingKey": .string("user-42")],
        headers: ["Authorization": "Bearer t0ken"]))
    try await config.fetchAndActivate()
    #expect(config[.rolloutPercent] == 40)
    #expect(config.configValue(for: .rolloutPercent).reason == "SPLIT")
    #expect(config.configValue(for: .rolloutPercent).evaluation?.errorCode == nil)
  }

  @Test func anUnchangedEvaluationIsA304AndAChangeArrivesByPolling() async throws {
    let server = try TestHTTPServer()
    let flags = Self.responder()
    server.serve(flags)
    let config = RemoteConfig(
      source: OFREPConfigSource(
        baseURL: server.baseURL, context: ["plan": .string("free")],
        headers: ["Authorization": "Bearer t0ken"]))
    let updates = Recorder(config.updates)
    config.startPolling(every: .milliseconds(20))
    defer { config.stopPolling() }
    try await server.waitForRequests(4, at: OFREPResponder.path)
    #expect(config[.newCheckout] == false)
    #expect(config.configValue(forKey: "new_checkout").reason == "DEFAULT")
    let requests = server.requests(at: OFREPResponder.path)
    #expect(requests.dropFirst().allSatisfy { $0.header("If-None-Match") != nil })
    #expect(updates.values.count == 1)

    flags.setFlag("max_items", variants: ["few": "3", "many": "50"], defaultVariant: "few")
    try await waitUntil("the changed flag") { config[.maxItems] == 3 }
    #expect(try await updates.waitForValues(2).last == ConfigUpdate(updatedKeys: ["max_items"]))
  }

  @Test func missingCredentialsStopWithUnauthorized() async throws {
    let server = try TestHTTPServer()
    server.serve(Self.responder())
    let config = RemoteConfig(source: OFREPConfigSource(baseURL: server.baseURL))
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }
    guard case .unauthorized(401)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
  }
}
