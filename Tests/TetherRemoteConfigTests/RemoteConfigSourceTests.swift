import Foundation
import Streams
import Synchronization
import TestSupport
import Testing
import Tether
import TetherRemoteConfig
import TetherSupport

/// A custom source as the documentation describes one: entries in memory with a revision
/// number, change notifications, and its own error type.
final class InMemoryConfigSource: RemoteConfigSource {
  struct Unavailable: Error {}

  private struct State {
    var entries: [String: JSONValue] = [:]
    var revision = 0
    var failing = false
    var fetches = 0
    var listeners: [Int: @Sendable () -> Void] = [:]
  }
  private let state = Lock(State())

  var fetches: Int { state.withLock { $0.fetches } }

  func publish(_ entries: [String: JSONValue], revision: Int) {
    let listeners = state.withLock { state in
      state.entries = entries
      state.revision = revision
      return Array(state.listeners.values)
    }
    for listener in listeners { listener() }
  }

  func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

  func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    let (entries, revision, failing) = state.withLock { state in
      state.fetches += 1
      return (state.entries, state.revision, state.failing)
    }
    if failing { throw Unavailable() }
    if request.previousVersion?.number == revision { return .notModified }
    return .modified(ConfigPayload(entries: entries, version: ConfigVersion(number: revision)))
  }

  func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    let id = state.withLock { state in
      let id = state.listeners.count
      state.listeners[id] = onChange
      return id
    }
    return AnyCancellable { [weak self] in
      _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
    }
  }
}

@Suite struct RemoteConfigSourceTests {
  @Test func aCustomSourceWithChangeNotifications() async throws {
    let source = InMemoryConfigSource()
    source.publish(["max_items": .int(1)], revision: 1)
    let config = RemoteConfig(source: source)
    let values = Recorder(config.values(for: .maxItems))
    try await config.fetchAndActivate()
    #expect(try await values.waitForValues(2) == [10, 1])

    // The source notices a change itself: no polling, no explicit fetch.
    source.publish(["max_items": .int(2)], revision: 2)
    #expect(try await values.waitForValues(3) == [10, 1, 2])

    // An older revision is never applied.
    source.publish(["max_items": .int(99)], revision: 1)
    try await waitUntil("the older revision to be fetched") { source.fetches >= 3 }
    config.isStale = true
    try await config.fetchAndActivate()
    #expect(config[.maxItems] == 2)
  }

  @Test func aCustomSourcesOwnErrorIsWrapped() async throws {
    let source = InMemoryConfigSource()
    source.fail(true)
    let config = RemoteConfig(source: source)
    await #expect(throws: RemoteConfigError.self) { try await config.fetch() }
    guard case .source(let underlying)? = config.lastError else {
      Issue.record("lastError: \(String(describing: config.lastError))")
      return
    }
    #expect(underlying is InMemoryConfigSource.Unavailable)
    #expect(config.lastFetchStatus == .failure)
  }
}
