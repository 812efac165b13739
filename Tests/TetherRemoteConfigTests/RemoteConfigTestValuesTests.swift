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

  @Test func theAppsOwnConfigIsNeverFetchedInAnIsolatedScope() async throws {
    let server = HTTPConfigSourceCounter()
    // The app's config, made outside the test's scope (at launch, say).
    let config = withSharedStorage(.process) { RemoteConfig(source: server) }
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    RemoteConfigTestValues.standingIn(for: config).set(.welcomeTitle, to: "from the test")
    #expect(title == "from the test")
    // The real config was never asked for anything.
    #expect(server.fetches == 0)
    #expect(config[.welcomeTitle] == "Welcome")
  }

  @Test func theRealConfigsDefaultsCarryOverButItsValuesDoNot() throws {
    let config = withSharedStorage(.process) { RemoteConfig() }
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
    let config = withSharedStorage(.process) {
      RemoteConfig(source: FileConfigSource(url: directory.file("config.json")))
    }
    RemoteConfigTestValues.useRealConfig(config)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    try await config.fetchAndActivate()
    try await waitUntil("the fetched title") { title == "from the file" }
  }

  /// The shape RemoteConfig.md suggests: one config per test, on a stub source. A config the
  /// test built itself is the one its keys read, so they follow its activations (on the old
  /// behaviour the key read a stand-in and this waited forever).
  @Test func aSharedReaderFollowsActivation() async throws {
    let source = InMemoryConfigSource()
    source.publish(["welcome_title": .string("from the stub")], revision: 1)
    let config = RemoteConfig(source: source)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    #expect(title == "Welcome")
    try await config.fetchAndActivate()
    try await waitUntil("the activated title", timeout: .seconds(5)) {
      title == "from the stub"
    }
    #expect(source.fetches == 1)
  }

  @Test func testValuesForAConfigTheTestBuiltAreItsOwnValues() {
    let config = RemoteConfig()
    let values = RemoteConfigTestValues.standingIn(for: config)
    #expect(values.config === config)
    @SharedReader(.remoteConfig(.maxItems, in: config)) var maxItems
    values.set(.maxItems, to: 4)
    #expect(maxItems == 4)
    #expect(config[.maxItems] == 4)
  }

  @Test func theSharedConfigIsAlwaysStoodInFor() {
    // Whichever task first touches `.shared`, it is the app's, not this test's.
    let values = RemoteConfigTestValues.standingIn(for: .shared)
    #expect(values.config !== RemoteConfig.shared)
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
