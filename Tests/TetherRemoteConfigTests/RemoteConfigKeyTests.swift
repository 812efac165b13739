import Foundation
import TestSupport
import Testing
import Tether
import TetherRemoteConfig

@Suite struct RemoteConfigKeyTests {
  @Test func sharedReaderShowsTheFetchedValueAfterActivation() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Fetched""#, "tags": #"["x"]"#]))
    let config = fixture.config
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    @SharedReader(.remoteConfig(.tags, in: config)) var tags
    #expect(title == "Welcome")
    #expect(tags == [])
    try await config.fetchAndActivate()
    try await waitUntil("the fetched title") { title == "Fetched" }
    #expect(tags == ["x"])
  }

  @Test func holdersOfTheSameKeyShareOneValue() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(document(["max_items": "4"]), to: "config.json")
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    @SharedReader(.remoteConfig(.maxItems, in: config)) var first
    @SharedReader(.remoteConfig(.maxItems, in: config)) var second
    let published = Recorder($second.values)
    try await published.waitForValues(1)
    try await config.fetchAndActivate()
    try await waitUntil("both holders") { first == 4 && second == 4 }
    #expect(try await published.waitForValues(2).last == 4)
    config[default: .maxItems] = 5
    #expect(first == 4)
  }

  @Test func theSharedInstanceIsTheDefault() async throws {
    let directory = try TemporaryDirectory()
    let key = ConfigKey<String>("shared_instance_test_\(UUID().uuidString)", default: "none")
    try directory.write(#"{"\#(key.name)": "shared"}"#, to: "config.json")
    @SharedReader(.remoteConfig(key)) var value
    #expect(value == "none")
    RemoteConfig.shared.configure(source: FileConfigSource(url: directory.file("config.json")))
    defer { RemoteConfig.shared.configure(source: nil) }
    try await RemoteConfig.shared.fetchAndActivate()
    try await waitUntil("the shared instance's value") { value == "shared" }
  }
}
