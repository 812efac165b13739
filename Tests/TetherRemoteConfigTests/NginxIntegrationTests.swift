import Foundation
import TestSupport
import Testing
import TetherRemoteConfig

@Suite struct NginxIntegrationTests {
  @Test(
    .enabled(
      if: NginxServer.executable != nil,
      "nginx is not installed; run Scripts/install-test-deps to include this integration test"))
  func etag304AndUpdatesAgainstARealNginx() async throws {
    let nginx = try await NginxServer.start()
    try nginx.publish(
      document(["welcome_title": #""From nginx""#, "max_items": "1"]), as: "config.json")
    let config = RemoteConfig(
      source: HTTPConfigSource(url: nginx.url(for: "/config.json")),
      settings: RemoteConfigSettings(fetchTimeout: 2))
    try await waitUntil("nginx to serve the document", timeout: .seconds(10)) {
      config.isStale = true
      return (try? await config.fetchAndActivate()) != nil
    }
    #expect(config[.welcomeTitle] == "From nginx")

    // The ETag path: nginx answers the conditional request with 304.
    let updates = Recorder(config.updates)
    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    // nginx logs a request just after answering it.
    try await waitUntil("two access log lines") { nginx.accessLog.count >= 2 }
    let log = nginx.accessLog
    #expect(log.first?.trimmingCharacters(in: .whitespaces) == "200 GET", "access log: \(log)")
    let conditional = try #require(log.last)
    #expect(conditional.hasPrefix("304 GET \""), "access log: \(log)")
    #expect(updates.values.isEmpty)

    // The update path: a new document reaches a polling config.
    let values = Recorder(config.values(for: .welcomeTitle))
    config.startPolling(every: .milliseconds(100))
    try nginx.publish(
      document(["welcome_title": #""Updated by nginx""#, "max_items": "12"]), as: "config.json")
    try await values.waitForValues(2, timeout: .seconds(10))
    #expect(values.values == ["From nginx", "Updated by nginx"])
    #expect(config[.maxItems] == 12)
    #expect(
      try await updates.waitForValues(1)
        == [ConfigUpdate(updatedKeys: ["welcome_title", "max_items"])])
    config.stopPolling()
    await nginx.stop()
  }
}
