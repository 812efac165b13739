import Foundation
import Streams
import TestSupport
import Testing
import TetherRemoteConfig

@Suite struct RemoteConfigTests {
  // MARK: Precedence and subscripts

  @Test func precedenceIsRemoteThenDefaultsThenTheKeysDefault() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Remote""#]))
    let config = fixture.config
    #expect(config[.welcomeTitle] == "Welcome")
    #expect(config.configValue(for: .welcomeTitle).source == .default)
    try config.setDefaults(["welcome_title": "Default", "max_items": 5])
    #expect(config[.welcomeTitle] == "Default")
    #expect(config[.maxItems] == 5)
    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Remote")
    #expect(
      config.configValue(for: .welcomeTitle) == ConfigValue(raw: .string("Remote"), source: .remote)
    )
    #expect(config[.maxItems] == 5)
    #expect(config.configValue(forKey: "max_items").source == .default)
    #expect(config.configValue(forKey: "missing") == ConfigValue(raw: .string(""), source: .static))
    #expect(config[.plain] == "")
    #expect(config.configValue(for: .plain).source == .static)
  }

  @Test func everySubscript() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Remote""#]))
    let config = fixture.config
    #expect(config[config: .welcomeTitle] == nil)
    #expect(config[safeConfig: .welcomeTitle] == nil)
    #expect(config[default: .welcomeTitle] == "Welcome")
    #expect(config[safeDefault: .welcomeTitle] == "Welcome")
    #expect(config[safe: .welcomeTitle] == "Welcome")
    #expect(config[safe: .plain] == nil)
    #expect(config[.plain] == "")

    config[default: .welcomeTitle] = "Set default"
    #expect(config[default: .welcomeTitle] == "Set default")
    #expect(config[.welcomeTitle] == "Set default")
    #expect(config.configValue(forKey: "welcome_title").source == .default)

    try await config.fetchAndActivate()
    #expect(config[.welcomeTitle] == "Remote")
    #expect(config[config: .welcomeTitle] == "Remote")
    #expect(config[safeConfig: .welcomeTitle] == "Remote")
    #expect(config[safe: .welcomeTitle] == "Remote")
    #expect(config[default: .welcomeTitle] == "Set default")
    #expect(config[safeDefault: .welcomeTitle] == "Set default")

    config[default: .welcomeTitle] = nil
    #expect(config[default: .welcomeTitle] == "Welcome")
    #expect(config.configValue(forKey: "welcome_title").source == .remote)
  }

  @Test func anInvalidValueIsNeverTaken() async throws {
    let fixture = try await Fixture(
      document(["max_items": #""lots""#, "new_checkout": #""perhaps""#, "banner": "[1]"]))
    let config = fixture.config
    let reported = Recorder(config.decodeErrorPublisher)
    try config.setDefaults(["max_items": 7])
    try await config.fetchAndActivate()

    #expect(config[.maxItems] == 7)
    #expect(config[config: .maxItems] == 7)
    #expect(config[safeConfig: .maxItems] == nil)
    #expect(config[safe: .maxItems] == 7)
    #expect(config.configValue(for: .maxItems).source == .default)
    #expect(config[.newCheckout] == false)
    #expect(config[safeConfig: .newCheckout] == nil)
    #expect(config[.banner] == nil)

    let errors = try await reported.waitForValues(3, "decode errors")
    #expect(Set(errors.map(\.key)) == ["max_items", "new_checkout", "banner"])
    #expect(Set(config.decodeErrors.map(\.key)) == ["max_items", "new_checkout", "banner"])
    let maxItems = try #require(errors.first { $0.key == "max_items" })
    #expect(
      maxItems.type == "Int" && maxItems.value == .string("lots") && maxItems.source == .remote)

    // Looking up again uses the decoded result: no second report.
    _ = config[.maxItems]
    #expect(reported.values.count == 3)

    // An invalid default falls back to the key's own default and is reported too.
    try config.setDefaults(["welcome_title": ["not", "a", "string"]])
    #expect(config[.welcomeTitle] == "Welcome")
    #expect(config[safeDefault: .welcomeTitle] == nil)
    #expect(config.decodeErrors.contains { $0.key == "welcome_title" && $0.source == .default })
  }

  @Test func arraysDatesAndDictionariesReadTheFetchedValue() async throws {
    let fixture = try await Fixture(
      document([
        "tags": #"["a", "b"]"#, "launch_date": #""2026-03-01T09:30:00Z""#,
        "limits": #"{"free": 3, "pro": "30"}"#, "banner": #"{"title": "Sale", "priority": 1}"#,
        "theme": #""dark""#, "ratio": #""0.75""#,
      ]))
    let config = fixture.config
    try config.setDefaults(["tags": ["default"], "limits": ["free": 1]])
    try await config.fetchAndActivate()
    #expect(config[.tags] == ["a", "b"])
    #expect(config[.launchDate] == Date(timeIntervalSince1970: 1_772_357_400))
    #expect(config[.limits] == ["free": 3, "pro": 30])
    #expect(config[.banner] == Banner(title: "Sale", priority: 1))
    #expect(config[.theme] == .dark)
    #expect(config[.ratio] == 0.75)
  }

  @Test func defaultsFromJSONAndPlistFiles() throws {
    let directory = try TemporaryDirectory()
    try directory.write(#"{"welcome_title": "From JSON", "max_items": "12"}"#, to: "defaults.json")
    let plist: [String: Any] = ["welcome_title": "From plist", "new_checkout": true, "tags": ["x"]]
    let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    try data.write(to: directory.file("defaults.plist"))
    try directory.write("[1, 2]", to: "array.json")
    try directory.write("{broken", to: "broken.json")

    let config = RemoteConfig()
    try config.setDefaults(fromJSON: directory.file("defaults.json"))
    #expect(config[.welcomeTitle] == "From JSON")
    #expect(config[.maxItems] == 12)
    try config.setDefaults(fromPlist: directory.file("defaults.plist"))
    #expect(config[.welcomeTitle] == "From plist")
    #expect(config[.newCheckout] == true)
    #expect(config[.tags] == ["x"])
    #expect(config[.maxItems] == 10)

    #expect {
      try config.setDefaults(fromJSON: directory.file("array.json"))
    } throws: { error in
      if case .notAnObject(found: "array") = error as? RemoteConfigError { return true }
      return false
    }
    #expect {
      try config.setDefaults(fromJSON: directory.file("broken.json"))
    } throws: { error in
      if case .malformedJSON = error as? RemoteConfigError { return true }
      return false
    }
    #expect {
      try config.setDefaults(fromPlist: directory.file("missing.plist"))
    } throws: { error in
      if case .fileUnreadable = error as? RemoteConfigError { return true }
      return false
    }
    #expect(config[.welcomeTitle] == "From plist")
  }

  // MARK: Fetch interval, isStale, single flight

  @Test func fetchInsideTheMinimumIntervalMakesNoRequest() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    #expect(config.lastFetchStatus == .noFetchYet)
    #expect(config.isStale)
    try await config.fetch()
    #expect(fixture.requestCount == 1)
    #expect(config.lastFetchStatus == .success)
    #expect(config.lastFetchTime != nil)
    #expect(!config.isStale)
    try await config.fetch()
    try await config.fetch()
    #expect(fixture.requestCount == 1)

    config.isStale = true
    #expect(config.isStale)
    try await config.fetch()
    #expect(fixture.requestCount == 2)
    #expect(!config.isStale)
    try await config.fetch()
    #expect(fixture.requestCount == 2)
  }

  @Test func zeroIntervalFetchesEveryTime() async throws {
    let fixture = try await Fixture(
      document(["max_items": "1"]), settings: RemoteConfigSettings(minimumFetchInterval: 0))
    try await fixture.config.fetch()
    try await fixture.config.fetch()
    #expect(fixture.requestCount == 2)
  }

  @Test func fiftyConcurrentFetchesMakeOneRequest() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    // A slow answer keeps the first request in flight while the others arrive.
    fixture.server.inject(.delay(.milliseconds(200)), at: Fixture.path)
    let config = fixture.config
    try await withThrowingTaskGroup(of: RemoteConfigFetchStatus.self) { group in
      for _ in 0..<50 { group.addTask { try await config.fetch() } }
      for try await status in group { #expect(status == .success) }
    }
    #expect(fixture.requestCount == 1)
  }

  // MARK: Fetch and activate

  @Test func fetchAloneChangesNothingVisibleAndActivateApplies() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Hi""#, "max_items": "3"]))
    let config = fixture.config
    let updates = Recorder(config.updates)
    try await config.fetch()
    #expect(config[.welcomeTitle] == "Welcome")
    #expect(config.activeKeys.isEmpty)
    #expect(await config.activate())
    #expect(config[.welcomeTitle] == "Hi")
    #expect(config[.maxItems] == 3)
    #expect(
      try await updates.waitForValues(1) == [
        ConfigUpdate(updatedKeys: ["welcome_title", "max_items"])
      ])
    // Nothing new fetched: activating again changes and emits nothing.
    #expect(await config.activate() == false)

    fixture.serve(document(["welcome_title": #""Hi""#, "max_items": "4", "tags": #"["new"]"#]))
    config.isStale = true
    #expect(try await config.fetchAndActivate())
    let received = try await updates.waitForValues(2)
    #expect(received.last == ConfigUpdate(updatedKeys: ["max_items", "tags"]))

    fixture.serve(document(["max_items": "4", "tags": #"["new"]"#]))
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(try await updates.waitForValues(3).last == ConfigUpdate(updatedKeys: ["welcome_title"]))
    #expect(config[.welcomeTitle] == "Welcome")
  }

  @Test func updatesWorkWithForAwait() async throws {
    let fixture = try await Fixture(document(["max_items": "3"]))
    let config = fixture.config
    let updates = Recorder(config.updates.values)
    try await config.fetchAndActivate()
    #expect(try await updates.waitForValues(1) == [ConfigUpdate(updatedKeys: ["max_items"])])
  }

  @Test func anIdenticalDocumentEmitsNothing() async throws {
    let fixture = try await Fixture(document(["max_items": "3"]))
    let config = fixture.config
    let updates = Recorder(config.updates)
    try await config.fetchAndActivate()
    try await updates.waitForValues(1)
    // Same entries under a new ETag: a full 200 response, yet nothing changed.
    fixture.server.setDocument(document(["max_items": "3"]), at: Fixture.path, etag: "\"other\"")
    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    #expect(fixture.requestCount == 2)
    // A later real change is the second update: nothing was emitted in between.
    fixture.serve(document(["max_items": "4"]))
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(try await updates.waitForValues(2).count == 2)
    #expect(updates.values.last == ConfigUpdate(updatedKeys: ["max_items"]))
  }

  @Test func aFailedFetchNeverActivates() async throws {
    let fixture = try await Fixture(document(["max_items": "3"]))
    let config = fixture.config
    try await config.fetchAndActivate()
    fixture.serve(document(["max_items": "4"]))
    fixture.server.inject(.status(500), at: Fixture.path)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }
    #expect(await config.activate() == false)
    #expect(config[.maxItems] == 3)
  }

  @Test func anOlderPayloadIsNeverApplied() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    fixture.server.setDocument(
      document(["max_items": "2"]), at: Fixture.path, headers: ["X-Config-Version": "2"])
    let config = fixture.config
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 2)
    // A lagging replica answers with version 1.
    fixture.server.setDocument(
      document(["max_items": "1"]), at: Fixture.path, headers: ["X-Config-Version": "1"])
    config.isStale = true
    #expect(try await config.fetchAndActivate() == false)
    #expect(config[.maxItems] == 2)

    // Older by Last-Modified, too.
    let later = Date(timeIntervalSince1970: 1_800_000_000)
    fixture.server.setDocument(document(["max_items": "5"]), at: Fixture.path, lastModified: later)
    let other = RemoteConfig(source: fixture.source)
    try await other.fetchAndActivate()
    fixture.server.setDocument(
      document(["max_items": "6"]), at: Fixture.path, lastModified: later.addingTimeInterval(-60))
    other.isStale = true
    try await other.fetchAndActivate()
    #expect(other[.maxItems] == 5)
  }

  // MARK: Observing values

  @Test func valuesForAKeyYieldsCurrentThenEachDistinctNewValue() async throws {
    let fixture = try await Fixture(document(["max_items": "1"]))
    let config = fixture.config
    let values = Recorder(config.values(for: .maxItems))
    #expect(try await values.waitForValues(1) == [10])
    try await config.fetchAndActivate()
    #expect(try await values.waitForValues(2) == [10, 1])
    // Another key changes: nothing for this one.
    fixture.serve(document(["max_items": "1", "ratio": "2"]))
    config.isStale = true
    try await config.fetchAndActivate()
    fixture.serve(document(["max_items": "2", "ratio": "2"]))
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(try await values.waitForValues(3) == [10, 1, 2])
    // Defaults reach the stream when they decide the value.
    fixture.serve(document(["ratio": "2"]))
    config.isStale = true
    try await config.fetchAndActivate()
    config[default: .maxItems] = 99
    #expect(try await values.waitForValues(5) == [10, 1, 2, 10, 99])
  }

  @Test func perKeyStreamsKeepWorkingAfterAFailedFetch() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""One""#]))
    let config = fixture.config
    let titles = Recorder(config.values(for: .welcomeTitle))
    try await config.fetchAndActivate()
    #expect(try await titles.waitForValues(2) == ["Welcome", "One"])

    fixture.server.inject(.status(500), at: Fixture.path)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }
    fixture.server.inject(.malformedBody(), at: Fixture.path)
    config.isStale = true
    await #expect(throws: RemoteConfigError.self) { try await config.fetchAndActivate() }

    fixture.serve(document(["welcome_title": #""Two""#]))
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(try await titles.waitForValues(3) == ["Welcome", "One", "Two"])
  }

  @Test func fetchWithoutASourceIsReported() async {
    let config = RemoteConfig()
    await #expect {
      try await config.fetch()
    } throws: { error in
      if case .notConfigured = error as? RemoteConfigError { return true }
      return false
    }
  }
}
