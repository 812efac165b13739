import Foundation
import TestSupport
import Tether
import TetherHTTP
import TetherRemoteConfig

/// The `firebase.*` scenarios, against the fake Firebase server on loopback.
func firebaseBenchmarks() -> [Benchmark] {
  [
    Benchmark(
      "firebase.fetch-304", baseline: "http.poll-304",
      note: "a Firebase fetch answered 304 (installation cached; timed after the first "
        + "answer); target <= 1.2x", operations: 300
    ) { n, stopwatch in
      try await FirebaseBench.notModifiedFetches(n, answer: .status304, stopwatch: stopwatch)
    },
    Benchmark(
      "firebase.fetch-no-change", baseline: "http.poll-304",
      note: "a Firebase fetch answered 200 NO_CHANGE (timed after the first answer)",
      operations: 300
    ) { n, stopwatch in
      try await FirebaseBench.notModifiedFetches(n, answer: .noChangeState, stopwatch: stopwatch)
    },
    Benchmark(
      "firebase.fetch-update",
      note: "a full fetch round trip (no ETag): the realtime target's \"fetch round trip\"",
      operations: 300
    ) { n in
      let firebase = try FirebaseFakeServer()
      defer { firebase.stop() }
      firebase.publish(FirebaseBench.entries(revision: 0))
      let source = FirebaseBench.source(firebase)
      var sum: UInt64 = 0
      for _ in 0..<n {
        if case .modified(let payload) = try await source.fetch(
          ConfigFetchRequest(previousVersion: nil, timeout: 10))
        {
          sum &+= UInt64(payload.entries.count)
        }
      }
      return sum
    },
    Benchmark(
      "firebase.realtime-propagation",
      note: "ns from a publish on the fake to the @SharedReader holding the value (median), "
        + "without the SDKs' 0.5-3 s random wait before the fetch; "
        + "target <= 10 ms + firebase.fetch-update"
    ) {
      try await FirebaseBench.realtimePropagation()
    },
  ]
}

private enum FirebaseBench {
  static let title = ConfigKey<String>("title", default: "")

  static func entries(revision: Int) -> [String: String] {
    var entries = ["title": "revision \(revision)"]
    for index in 0..<20 { entries["key_\(index)"] = "value \(index)" }
    return entries
  }

  static func source(
    _ firebase: FirebaseFakeServer, realtime: FirebaseRealtimeSettings? = nil
  ) -> FirebaseConfigSource {
    FirebaseConfigSource(
      apiKey: firebase.apiKey, projectID: firebase.projectID, appID: firebase.appID,
      realtime: realtime, endpoints: .all(at: firebase.baseURL))
  }

  /// `n` fetches conditional on the current ETag, each answered "not modified".
  static func notModifiedFetches(
    _ n: Int, answer: FirebaseFakeServer.NotModifiedAnswer, stopwatch: Stopwatch
  ) async throws -> UInt64 {
    let firebase = try FirebaseFakeServer()
    defer { firebase.stop() }
    firebase.answerNotModified(with: answer)
    firebase.publish(entries(revision: 0))
    let source = source(firebase)
    guard
      case .modified(let payload) = try await source.fetch(
        ConfigFetchRequest(previousVersion: nil, timeout: 10))
    else {
      stopwatch.start()
      stopwatch.stop()
      return 0
    }
    let request = ConfigFetchRequest(previousVersion: payload.version, timeout: 10)
    var sum: UInt64 = 0
    stopwatch.start()
    for _ in 0..<n {
      if case .notModified = try await source.fetch(request) { sum &+= 1 }
    }
    stopwatch.stop()
    return sum
  }

  /// One sample: the median time from a publish to the holder's new value, over 21 publishes.
  static func realtimePropagation() async throws -> (sample: Double, checksum: UInt64) {
    let firebase = try FirebaseFakeServer()
    defer { firebase.stop() }
    // The machinery's own latency: the random wait the SDKs add before a fetch that follows
    // an announcement (0.5 to 3 s) is set to zero here.
    var settings = FirebaseRealtimeSettings(initialBackoff: 0.05)
    settings.announcementFetchDelay = Backoff(initial: .zero, maximum: .zero, jitter: .none)
    let source = source(firebase, realtime: settings)
    let config = RemoteConfig(source: source)
    let reader = SharedReader(.remoteConfig(title, in: config))
    try await firebase.waitForRealtimeClients(1)
    try await waitUntil("the connected state") { source.realtimeState == .connected }
    firebase.publish(entries(revision: 0))
    try await waitUntil("the first template") { reader.wrappedValue == "revision 0" }
    var samples: [Double] = []
    for revision in 1...21 {
      let expected = "revision \(revision)"
      let start = ContinuousClock.now
      firebase.publish(entries(revision: revision))
      while reader.wrappedValue != expected { await Task.yield() }
      samples.append(Double((ContinuousClock.now - start).nanoseconds))
    }
    samples.sort()
    return (samples[samples.count / 2], UInt64(samples.count))
  }
}
