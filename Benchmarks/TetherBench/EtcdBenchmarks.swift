import Foundation
import TestSupport
import Tether
import TetherEtcd

// The baseline is a bare URLSession put, so this file (a benchmark, not a library module)
// names URLSession's own module; Tether's libraries reach the network only through TetherHTTP.
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `etcd.*` scenarios against a local single-member etcd this run starts; none when etcd
/// is not installed (a note says so).
func etcdBenchmarks() -> [Benchmark] {
  guard EtcdServer.executable != nil else {
    FileHandle.standardError.write(
      Data("etcd.*: skipped, etcd is not installed (Scripts/install-test-deps)\n".utf8))
    return []
  }
  return [
    Benchmark(
      "baseline.etcd-put", note: "bare URLSession POST /v3/kv/put, 8-byte value",
      operations: 200
    ) { n in
      let etcd = try await EtcdBench.server.value
      let session = URLSession(configuration: .ephemeral)
      defer { session.invalidateAndCancel() }
      var request = URLRequest(url: etcd.clientURLs[0].appendingPathComponent("v3/kv/put"))
      request.httpMethod = "POST"
      let key = Data("/bench/baseline".utf8).base64EncodedString()
      var sum: UInt64 = 0
      for i in 0..<n {
        let value = Data(String(i).utf8).base64EncodedString()
        request.httpBody = Data(#"{"key":"\#(key)","value":"\#(value)"}"#.utf8)
        let (data, _) = try await EtcdBench.data(session, request)
        sum &+= UInt64(data.count)
      }
      return sum
    },
    Benchmark(
      "etcd.save-roundtrip", baseline: "baseline.etcd-put",
      note: "withLock until etcd committed it (CAS txn); target <= 1.5x", operations: 200
    ) { n in
      let etcd = try await EtcdBench.server.value
      let shared = Shared(
        wrappedValue: 0, .etcd("/bench/save-\(UUID().uuidString)", in: EtcdBench.cluster(etcd)))
      try await shared.load()
      for _ in 0..<n { shared.withLock { $0 += 1 } }
      // Saves run one at a time in order: this one ends after every one before it.
      try await shared.save()
      return UInt64(shared.wrappedValue)
    },
    Benchmark(
      "etcd.save-single", baseline: "baseline.etcd-put",
      note: "one uncoalesced save: time per etcd write (revisions counted); target <= 1.5x",
      custom: { try await EtcdBench.singleSaves() }),
    Benchmark(
      "etcd.propagation", baseline: "baseline.etcd-put",
      note: "A's withLock -> B's holder has it (median); target <= 2x",
      custom: { try await EtcdBench.propagation() }),
    Benchmark(
      "etcd.update-contended-4", baseline: "baseline.etcd-put",
      note: "4 holders x 25 updates on one key, per successful update; exact", operations: 100
    ) { n in
      let etcd = try await EtcdBench.server.value
      let key = "/bench/contended-\(UUID().uuidString)"
      let holders = (0..<4).map { _ in
        Shared(wrappedValue: 0, .etcd(key, in: EtcdBench.cluster(etcd)))
      }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for holder in holders {
          group.addTask { for _ in 0..<(n / 4) { try await holder.update { $0 += 1 } } }
        }
        try await group.waitForAll()
      }
      let total = try await holders[0].update {
        $0 += 0; return $0
      }
      guard total == n / 4 * 4 else {
        throw EtcdError.invalidResponse("contended updates ended at \(total), not \(n / 4 * 4)")
      }
      return UInt64(total)
    },
    Benchmark(
      "etcd.read", baseline: "core.read",
      note: "reading an etcd-backed @Shared (never the network); target <= 2x",
      operations: 1_000_000
    ) { n in
      let etcd = try await EtcdBench.server.value
      let shared = Shared(
        wrappedValue: UInt64(42), .etcd("/bench/read", in: EtcdBench.cluster(etcd)))
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= shared.wrappedValue }
      return sum
    },
  ]
}

private enum EtcdBench {
  /// One etcd for the whole run.
  static let server = Task { try await EtcdServer.start() }

  static func cluster(_ etcd: EtcdServer) -> EtcdCluster {
    EtcdCluster(endpoints: etcd.clientURLs)
  }

  static func data(
    _ session: URLSession, _ request: URLRequest
  ) async throws -> (
    Data, URLResponse
  ) {
    try await withCheckedThrowingContinuation { continuation in
      session.dataTask(with: request) { data, response, error in
        if let error {
          continuation.resume(throwing: error)
        } else {
          continuation.resume(returning: (data ?? Data(), response!))
        }
      }.resume()
    }
  }

  /// One sample: the time per write of saves that never coalesce. Each round changes the value
  /// and waits for `save()`; a round makes more than one write (the change's own save, then
  /// the explicit one), so the time is divided by the writes etcd counted, read from its
  /// revision before and after (nothing else writes to this member meanwhile).
  static func singleSaves() async throws -> (sample: Double, checksum: UInt64) {
    let etcd = try await server.value
    let shared = Shared(
      wrappedValue: 0, .etcd("/bench/single-\(UUID().uuidString)", in: cluster(etcd)))
    try await shared.load()
    let session = URLSession(configuration: .ephemeral)
    defer { session.invalidateAndCancel() }
    let before = try await revision(etcd, session)
    let start = ContinuousClock.now
    for _ in 0..<50 {
      shared.withLock { $0 += 1 }
      try await shared.save()
    }
    let elapsed = ContinuousClock.now - start
    let writes = try await revision(etcd, session) - before
    guard writes > 0 else { throw EtcdError.invalidResponse("no write reached etcd") }
    return (Double(elapsed.nanoseconds) / Double(writes), UInt64(shared.wrappedValue))
  }

  /// The member's current revision (the number of writes it has committed).
  static func revision(_ etcd: EtcdServer, _ session: URLSession) async throws -> Int64 {
    var request = URLRequest(url: etcd.clientURLs[0].appendingPathComponent("v3/kv/range"))
    request.httpMethod = "POST"
    let key = Data("/bench/none".utf8).base64EncodedString()
    request.httpBody = Data(#"{"key":"\#(key)"}"#.utf8)
    let (data, _) = try await self.data(session, request)
    struct Range: Decodable {
      struct Header: Decodable { let revision: String }
      let header: Header
    }
    guard let revision = Int64(try JSONDecoder().decode(Range.self, from: data).header.revision)
    else { throw EtcdError.invalidResponse("etcd's revision is not a number") }
    return revision
  }

  /// One sample: the median time from A's change to B's holder having it.
  static func propagation() async throws -> (sample: Double, checksum: UInt64) {
    let etcd = try await server.value
    let key = "/bench/propagation-\(UUID().uuidString)"
    let a = Shared(wrappedValue: 0, .etcd(key, in: cluster(etcd)))
    let b = Shared(wrappedValue: 0, .etcd(key, in: cluster(etcd)))
    try await a.load()
    try await waitUntil("B watching") { !b.isLoading }
    var samples: [Double] = []
    for value in 1...21 {
      let start = ContinuousClock.now
      a.withLock { $0 = value }
      while b.wrappedValue != value { await Task.yield() }
      samples.append(Double((ContinuousClock.now - start).nanoseconds))
    }
    samples.sort()
    return (samples[samples.count / 2], UInt64(b.wrappedValue))
  }
}
