import Foundation
import TestSupport
import TetherRemoteConfig

/// The `config.*` scenarios.
func configBenchmarks() -> [Benchmark] {
  [
    Benchmark(
      "config.lookup-string", baseline: "baseline.mutex-read", note: "target <= 100 ns",
      operations: 1_000_000
    ) { n in
      let config = try await ConfigBench.activeConfig()
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= UInt64(config[ConfigBench.title].utf8.count) }
      return sum
    },
    Benchmark(
      "config.lookup-codable", baseline: "config.lookup-string", note: "target <= 200 ns",
      operations: 1_000_000
    ) { n in
      let config = try await ConfigBench.activeConfig()
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= UInt64(config[ConfigBench.banner].priority) }
      return sum
    },
    Benchmark(
      "config.poll-200",
      note: "one poll cycle, changed 100-key document: decoded, activated, cache written",
      operations: 200
    ) { n in
      let (server, config) = try await ConfigBench.pollingConfig()
      defer { server.stop() }
      // Each poll finds a changed document (one value differs), as a real 200 does.
      let documents = [
        ConfigBench.document(keys: 100, revision: 1), ConfigBench.document(keys: 100),
      ]
      for i in 0..<n {
        server.setDocument(documents[i % 2], at: "/config.json")
        config.isStale = true
        try await config.fetchAndActivate()
      }
      return UInt64(server.requestCount)
    },
    Benchmark(
      "config.poll-304", baseline: "config.poll-200",
      note: "one poll cycle answered 304: no decoding, a fraction of poll-200", operations: 200
    ) { n in
      let (server, config) = try await ConfigBench.pollingConfig()
      defer { server.stop() }
      for _ in 0..<n {
        config.isStale = true
        try await config.fetchAndActivate()
      }
      return UInt64(server.requestCount)
    },
    Benchmark(
      "config.start-cached-1000", note: "start from a cache of 1,000 keys; target <= 5 ms",
      operations: 50
    ) { n in
      let cacheURL = try await ConfigBench.cache(keys: 1000)
      var sum: UInt64 = 0
      for _ in 0..<n {
        let config = RemoteConfig(cacheURL: cacheURL)
        sum &+= UInt64(config[ConfigBench.title].utf8.count)
      }
      return sum
    },
  ]
}

private enum ConfigBench {
  static let title = ConfigKey<String>("key_1", default: "")
  static let banner = ConfigKey<BenchBanner>(
    "banner", default: BenchBanner(title: "", priority: 0, tags: []))

  struct BenchBanner: Codable, ConfigValueRepresentable {
    var title: String
    var priority: Int
    var tags: [String]
  }

  /// A JSON object of `keys` string entries plus a `banner` object; `revision` changes one.
  static func document(keys: Int, revision: Int = 0) -> String {
    var entries = (0..<keys).map { #""key_\#($0)": "value number \#($0)""# }
    entries[0] = #""key_0": "revision \#(revision)""#
    return "{" + entries.joined(separator: ", ")
      + #", "banner": {"title": "Sale", "priority": 3, "tags": ["a", "b"]}}"#
  }

  static func directory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("tether-bench-config-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// A config whose active values came from a 100-key file.
  static func activeConfig() async throws -> RemoteConfig {
    let file = try directory().appendingPathComponent("config.json")
    try Data(document(keys: 100).utf8).write(to: file)
    let config = RemoteConfig(source: FileConfigSource(url: file, watch: false))
    try await config.fetchAndActivate()
    // Warm the per-activation decode.
    _ = config[title]
    _ = config[banner]
    return config
  }

  /// A loopback server with a 100-key document and a config polling it.
  static func pollingConfig() async throws -> (TestHTTPServer, RemoteConfig) {
    let server = try await TestHTTPServer.start()
    server.setDocument(document(keys: 100), at: "/config.json")
    // A poll cycle of a configured client: fetch, activate, and keep the on-disk cache.
    let config = RemoteConfig(
      source: HTTPConfigSource(url: server.url(for: "/config.json")),
      cacheURL: try directory().appendingPathComponent("cache.json"))
    try await config.fetchAndActivate()
    return (server, config)
  }

  /// A cache file holding `keys` entries.
  static func cache(keys: Int) async throws -> URL {
    let directory = try directory()
    let file = directory.appendingPathComponent("config.json")
    try Data(document(keys: keys).utf8).write(to: file)
    let cacheURL = directory.appendingPathComponent("cache.json")
    let config = RemoteConfig(
      source: FileConfigSource(url: file, watch: false), cacheURL: cacheURL)
    try await config.fetchAndActivate()
    return cacheURL
  }
}
