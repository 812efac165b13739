// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "Tether",
  // `Synchronization.Mutex` needs these OS versions on Apple platforms.
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "Streams", targets: ["Streams"]),
    .library(name: "Tether", targets: ["Tether"]),
    .library(name: "TetherHTTP", targets: ["TetherHTTP"]),
    .library(name: "TetherRemoteConfig", targets: ["TetherRemoteConfig"]),
    .library(name: "TetherEtcd", targets: ["TetherEtcd"]),
    .library(name: "TetherTesting", targets: ["TetherTesting"]),
    .executable(name: "tour", targets: ["Tour"]),
    .executable(name: "custom-strategy", targets: ["CustomStrategy"]),
    .executable(name: "http-status", targets: ["HTTPStatus"]),
    .executable(name: "firebase-config", targets: ["FirebaseConfig"]),
    .executable(name: "cluster", targets: ["Cluster"]),
    .executable(name: "tether-bench", targets: ["TetherBench"]),
  ],
  targets: [
    // Package-internal machinery every module shares (not a product): the lock, the ordered
    // delivery primitive, back-off's engine, the serial write queue, JSON values and parser.
    // Only `JSONValue` is public here, because TetherRemoteConfig names it by typealias (an
    // enum's cases cannot be forwarded); `Backoff` stays a struct in TetherHTTP over the engine.
    .target(name: "TetherSupport"),
    .target(name: "Streams", dependencies: ["TetherSupport"]),
    .target(name: "Tether", dependencies: ["Streams", "TetherSupport"]),
    // The one HTTP layer: only this module imports FoundationNetworking.
    .target(name: "TetherHTTP", dependencies: ["Streams", "Tether", "TetherSupport"]),
    // JSON values and their parser are TetherSupport's, so etcd's wire format needs no remote
    // config: an `.etcd` user links none of it (no Firebase, no config cache).
    .target(
      name: "TetherEtcd",
      dependencies: ["Streams", "Tether", "TetherHTTP", "TetherSupport"]),
    // TetherEtcd: for `EtcdConfigSource`. A config source is a remote-config concept (beside
    // the HTTP, OFREP, file and Firebase sources), so it lives here and remote config points
    // at etcd, not the other way round. Of the two one-way graphs this is the one where the
    // smaller module is the one linked for nothing: a remote-config user also links the etcd
    // client (it needs nothing else that remote config does not already link), while the
    // opposite direction made every etcd user link remote config and Firebase. Users who
    // `import TetherEtcd` and `import TetherRemoteConfig` see the same names as before.
    .target(
      name: "TetherRemoteConfig",
      dependencies: ["Streams", "Tether", "TetherEtcd", "TetherHTTP", "TetherSupport"]),
    // Exactly the modules it imports: the trait, and the stand-ins for networked keys.
    .target(
      name: "TetherTesting",
      dependencies: [
        "Streams", "Tether", "TetherHTTP", "TetherRemoteConfig", "TetherEtcd", "TetherSupport",
      ]),

    .executableTarget(
      name: "Tour",
      dependencies: ["Streams", "Tether", "TetherRemoteConfig"],
      path: "Examples/Tour",
      resources: [.copy("Resources")]
    ),
    .executableTarget(
      name: "CustomStrategy",
      dependencies: ["Tether"],
      path: "Examples/CustomStrategy"
    ),
    .executableTarget(
      name: "HTTPStatus",
      dependencies: ["Tether", "TetherHTTP", "TestSupport"],
      path: "Examples/HTTPStatus"
    ),
    .executableTarget(
      name: "FirebaseConfig",
      dependencies: ["Tether", "TetherRemoteConfig", "TestSupport"],
      path: "Examples/FirebaseConfig"
    ),
    .executableTarget(
      name: "Cluster",
      dependencies: ["Tether", "TetherEtcd", "TestSupport"],
      path: "Examples/Cluster"
    ),
    .executableTarget(
      name: "TetherBench",
      dependencies: [
        "Streams", "Tether", "TetherHTTP", "TetherRemoteConfig", "TetherEtcd", "TestSupport",
      ],
      path: "Benchmarks/TetherBench"
    ),

    // Test infrastructure: a loopback HTTP server, temporary directories, child processes.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    // The second real process that cross-process tests launch.
    .executableTarget(
      name: "tether-test-child",
      dependencies: ["Tether"],
      path: "Tests/TestChild"
    ),

    .testTarget(name: "StreamsTests", dependencies: ["Streams", "TestSupport"]),
    .testTarget(
      name: "TetherTests",
      dependencies: [
        "Streams", "Tether", "TetherSupport", "TetherTesting", "TestSupport", "tether-test-child",
        // Run by CustomStrategyExampleTests: the article's example, checked end to end.
        "CustomStrategy",
      ]
    ),
    // The second process TetherHTTPTests measures peak memory in.
    .executableTarget(
      name: "tether-http-probe",
      dependencies: ["TetherHTTP"],
      path: "Tests/HTTPProbe"
    ),
    .testTarget(
      name: "TetherHTTPTests",
      dependencies: [
        "Streams", "Tether", "TetherHTTP", "TetherRemoteConfig", "TetherSupport", "TetherTesting",
        "TestSupport", "tether-http-probe",
      ]
    ),
    .testTarget(
      name: "TetherRemoteConfigTests",
      dependencies: [
        "Streams", "Tether", "TetherHTTP", "TetherRemoteConfig", "TetherSupport", "TetherTesting",
        "TestSupport",
      ]
    ),
    // The second real process TetherEtcdTests launch (updaters, lease holders).
    .executableTarget(
      name: "tether-etcd-child", dependencies: ["Streams", "Tether", "TetherEtcd"],
      path: "Tests/EtcdChild"),
    .testTarget(
      name: "TetherEtcdTests",
      dependencies: [
        "Streams", "Tether", "TetherEtcd", "TetherHTTP", "TetherRemoteConfig", "TetherTesting",
        "TestSupport", "tether-etcd-child",
      ]
    ),
    .testTarget(
      name: "TestSupportTests",
      dependencies: ["TestSupport", "tether-test-child"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
