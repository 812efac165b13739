import Foundation
import TestSupport
import Testing
import Tether
import TetherRemoteConfig

/// A `.remoteConfig` holder shows the config's first answer as a load (issue #33, item 10):
/// `isLoading` until a fetch, an activation or the cache answers, `loadError` when the fetch
/// fails and the config has nothing but its defaults.
@Suite struct RemoteConfigKeyLoadingTests {
  @Test func aHolderIsLoadingUntilTheFirstFetchIsActivated() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Fetched""#]))
    @SharedReader(.remoteConfig(.welcomeTitle, in: fixture.config)) var title
    #expect($title.isLoading)
    #expect(title == "Welcome")  // the default, meanwhile
    #expect($title.loadError == nil)
    try await fixture.config.fetchAndActivate()
    try await waitUntil("the fetched title, loaded") { title == "Fetched" && !$title.isLoading }
    #expect($title.loadError == nil)
    // A holder made after the answer is not loading at all.
    @SharedReader(.remoteConfig(.maxItems, in: fixture.config)) var later
    #expect(!$later.isLoading)
    #expect(later == 10)
  }

  @Test func aFailedFirstFetchIsTheHoldersLoadErrorUntilAFetchSucceeds() async throws {
    let fixture = try await Fixture(document(["welcome_title": #""Fetched""#]))
    fixture.server.inject(.status(404), at: Fixture.path)
    @SharedReader(.remoteConfig(.welcomeTitle, in: fixture.config)) var title
    #expect($title.isLoading)
    await #expect(throws: RemoteConfigError.unexpectedStatus(404)) {
      try await fixture.config.fetchAndActivate()
    }
    try await waitUntil("the load error") { $title.loadError != nil }
    #expect(!$title.isLoading)
    #expect($title.loadError as? RemoteConfigError == .unexpectedStatus(404))
    #expect(title == "Welcome")
    // A holder made now sees the same failure.
    @SharedReader(.remoteConfig(.maxItems, in: fixture.config)) var other
    #expect($other.loadError as? RemoteConfigError == .unexpectedStatus(404))
    // The next fetch succeeds: the value arrives and the error is gone from both.
    try await fixture.config.fetchAndActivate()
    try await waitUntil("the fetched title") { title == "Fetched" }
    try await waitUntil("no load error") { $title.loadError == nil && $other.loadError == nil }
    #expect(!$title.isLoading)
  }

  @Test func aFailingSourceEndsTheLoadWithItsError() async throws {
    let source = InMemoryConfigSource()
    source.fail(true)
    let config = RemoteConfig(source: source)
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    #expect($title.isLoading)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    try await waitUntil("the load error") { $title.loadError != nil }
    #expect(!$title.isLoading)
    guard case .source(let underlying) = $title.loadError as? RemoteConfigError else {
      Issue.record("expected the source's error, got \(String(describing: $title.loadError))")
      return
    }
    #expect(underlying is InMemoryConfigSource.Unavailable)
  }

  @Test func aCachedConfigAnswersAtOnce() async throws {
    let directory = try TemporaryDirectory()
    let cacheURL = directory.file("remote-config.json")
    let first = try await Fixture(document(["welcome_title": #""Cached""#]), cacheURL: cacheURL)
    try await first.config.fetchAndActivate()
    // A restart: a new config on the same cache, before any fetch.
    let restarted = RemoteConfig(source: first.source, cacheURL: cacheURL)
    @SharedReader(.remoteConfig(.welcomeTitle, in: restarted)) var title
    #expect(!$title.isLoading)
    #expect(title == "Cached")
  }

  @Test func aConfigWithoutASourceAnswersAtOnce() {
    let config = RemoteConfig()
    @SharedReader(.remoteConfig(.welcomeTitle, in: config)) var title
    #expect(!$title.isLoading)
    #expect($title.loadError == nil)
    #expect(title == "Welcome")
  }
}
