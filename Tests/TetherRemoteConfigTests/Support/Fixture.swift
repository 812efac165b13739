import Foundation
import TestSupport
import TetherRemoteConfig

/// A loopback server serving a config document at `/config.json` and a config reading it.
struct Fixture {
  let server: TestHTTPServer
  let config: RemoteConfig
  let source: HTTPConfigSource

  static let path = "/config.json"

  init(
    _ document: String, settings: RemoteConfigSettings = RemoteConfigSettings(fetchTimeout: 5),
    cacheURL: URL? = nil, maximumResponseSize: Int = 4 << 20
  ) async throws {
    server = try await TestHTTPServer.start()
    server.setDocument(document, at: Self.path)
    source = HTTPConfigSource(
      url: server.url(for: Self.path), maximumResponseSize: maximumResponseSize)
    config = RemoteConfig(source: source, settings: settings, cacheURL: cacheURL)
  }

  var requestCount: Int { server.requestCount(at: Self.path) }

  func serve(_ document: String) { server.setDocument(document, at: Self.path) }
}
