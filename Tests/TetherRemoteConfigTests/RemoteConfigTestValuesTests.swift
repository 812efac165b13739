import Foundation
import TestSupport
import Testing
import Tether
import TetherRemoteConfig
import TetherTesting

/// `.remoteConfig` keys in an isolated scope read the values the test sets, never a source.
@Suite(.isolatedSharedState) struct RemoteConfigTestValuesTests {
  @Test func holdersReadTheValuesTheTestSetsAtOnce() {
    let values = RemoteConfigTestValues.standingIn(for: .shared)
    @SharedReader(.remoteConfig(.welcomeTitle)) var title
    @SharedReader(.remoteConfig(.maxItems)) var maxItems
    #expect(title == "Welcome")
    #expect(maxItems == 10)

    values.set(.welcomeTitle, to: "Hello, test")
    values.set(.maxItems, to: 3)
    #expect(title == "Hello, test")
    #expect(maxItems == 3)
    #expect(values.config[.maxItems] == 3)

    values.remove(.welcomeTitle)
    #expect(title == "Welcome")
  }

  @Test func aConfigWithASourceIsNeverFetchedInAnIsolatedScope() async throws {
    let server = HTTPConfigSourceCounter()
    let config = RemoteConfig(source: server)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    RemoteConfigTestValues.standingIn(for: config).set(.welcomeTitle, to: "from the test")
    #expect(title == "from the test")
    // The real config was never asked for anything.
    #expect(server.fetches == 0)
    #expect(config[.welcomeTitle] == "Welcome")
  }

  @Test func theRealConfigsDefaultsCarryOverButItsValuesDoNot() throws {
    let config = RemoteConfig()
    config[default: .maxItems] = 25
    @SharedReader(.remoteConfig(.maxItems, in: config)) var maxItems
    #expect(maxItems == 25)
    RemoteConfigTestValues.standingIn(for: config).set(.maxItems, to: 2)
    #expect(maxItems == 2)
  }

  @Test func aValueOfTheWrongTypeFallsBackAndIsReported() {
    let values = RemoteConfigTestValues.standingIn()
    @SharedReader(.remoteConfig(.maxItems)) var maxItems
    values.set("max_items", json: .string("many"))
    #expect(maxItems == 10)
    #expect(values.config.decodeErrors.contains { $0.key == "max_items" })
  }

  @Test func eachTestStartsWithoutValues() {
    let values = RemoteConfigTestValues.standingIn()
    #expect(values.config.activeKeys.isEmpty)
    @SharedReader(.remoteConfig(.welcomeTitle)) var title
    #expect(title == "Welcome")
  }

  @Test func aTestMayReadTheRealConfigInstead() async throws {
    let directory = try TemporaryDirectory()
    try directory.write(#"{"welcome_title": "from the file"}"#, to: "config.json")
    let config = RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    RemoteConfigTestValues.useRealConfig(config)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    try await config.fetchAndActivate()
    try await waitUntil("the fetched title") { title == "from the file" }
  }
}

/// A source that only counts how often it is asked.
private final class HTTPConfigSourceCounter: RemoteConfigSource, Sendable {
  private let count = LockedState(0)
  var fetches: Int { count.withLock { $0 } }
  func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    count.withLock { $0 += 1 }
    throw CancellationError()
  }
}
