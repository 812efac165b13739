import Foundation
import Synchronization
import TestSupport
import Tether
import TetherHTTP

// The baseline is a bare URLSession, so this file (a benchmark, not a library module) names
// URLSession's own module; Tether's libraries reach the network only through TetherHTTP.
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The `https.*` scenarios and their URLSession baselines: the same 1 KB JSON GET against one
/// real nginx over TLS (certificates made by this run), one at a time on one kept-alive
/// connection, and 32 in flight. None when nginx, openssl or libssl.so.3 is missing (a note
/// says so).
func httpsBenchmarks() -> [Benchmark] {
  if let missing = HTTPSBench.missing {
    FileHandle.standardError.write(
      Data("https.*: skipped, \(missing) (Scripts/install-test-deps)\n".utf8))
    return []
  }
  var rows: [Benchmark] = []
  if HTTPSBench.workerCanTrustTheAuthority {
    rows.append(
      Benchmark(
        "baseline.urlsession-https-get-1k",
        note: "bare URLSession data task + JSONDecoder, 1 KB, nginx over TLS (a worker process)",
        custom: { try await HTTPSBench.urlSessionSample() }))
  } else {
    FileHandle.standardError.write(
      Data(
        ("baseline.urlsession-https-get-1k: skipped, URLSession can trust the test authority only "
          + "in a private mount namespace (`unshare -m`, root)\n").utf8))
  }
  rows.append(
    Benchmark(
      "https.endpoint-get-1k",
      baseline: HTTPSBench.workerCanTrustTheAuthority ? "baseline.urlsession-https-get-1k" : nil,
      note: "typed Endpoint GET over TLS on the engine, decoded; target <= 0.5x",
      custom: {
        let fixture = try await HTTPSBench.fixture.value
        let client = HTTPClient(
          baseURL: fixture.nginx.baseURL,
          trustedCertificates: [fixture.authority.certificatePEM], proxy: .none)
        // The same shape as the worker: one GET for the handshake, then the timed ones.
        _ = try await client.send(HTTPSBench.items)
        let n = HTTPSBench.operations
        var sum: UInt64 = 0
        let elapsed = try await ContinuousClock().measure {
          for _ in 0..<n { sum &+= UInt64(try await client.send(HTTPSBench.items).count) }
        }
        return (Double(elapsed.nanoseconds) / Double(n), sum)
      }))
  if HTTPSBench.workerCanTrustTheAuthority {
    rows.append(
      Benchmark(
        "baseline.urlsession-https-concurrent-32",
        note: "bare URLSession data tasks over TLS, 32 in flight, ns per completed request "
          + "(a worker process)",
        custom: { try await HTTPSBench.urlSessionSample(inFlight: 32) }))
  }
  rows.append(
    Benchmark(
      "https.concurrent-32",
      baseline: HTTPSBench.workerCanTrustTheAuthority
        ? "baseline.urlsession-https-concurrent-32" : nil,
      note: "GETs over TLS through HTTPClient, 32 in flight, ns per completed request; "
        + "target <= 0.12x",
      custom: {
        let fixture = try await HTTPSBench.fixture.value
        let client = HTTPClient(
          baseURL: fixture.nginx.baseURL,
          trustedCertificates: [fixture.authority.certificatePEM], proxy: .none)
        _ = try await client.send(HTTPSBench.items)
        let n = HTTPSBench.concurrentOperations
        var sum: UInt64 = 0
        let elapsed = try await ContinuousClock().measure {
          sum = try await Benchmark.inFlight(32, total: n) {
            UInt64(try await client.send(HTTPSBench.items).count)
          }
        }
        return (Double(elapsed.nanoseconds) / Double(n), sum)
      }))
  return rows
}

/// The URLSession side of `baseline.urlsession-https-get-1k`, run as
/// `tether-bench --urlsession-https-worker URL COUNT`: `COUNT` GETs of `URL` on one session,
/// then one line, the nanoseconds per GET and a checksum. Returns the exit status.
///
/// With a third argument, `WIDTH`, the GETs run `WIDTH` at a time and the line gives the
/// nanoseconds per completed GET.
func runURLSessionHTTPSWorker(_ arguments: [String]) async -> Int32 {
  guard arguments.count == 2 || arguments.count == 3, let url = URL(string: arguments[0]),
    let n = Int(arguments[1])
  else { return 2 }
  let width = arguments.count == 3 ? Int(arguments[2]) ?? 1 : 1
  let session = URLSession(configuration: .ephemeral)
  defer { session.invalidateAndCancel() }
  let request = URLRequest(url: url)
  do {
    // One GET first: the handshake, as the engine's side pays it once per client too.
    _ = try await HTTPSBench.data(session, request)
    let clock = ContinuousClock()
    var sum: UInt64 = 0
    let elapsed = try await clock.measure {
      if width > 1 {
        sum = try await Benchmark.inFlight(width, total: n) {
          let data = try await HTTPSBench.data(session, request)
          return UInt64(try JSONDecoder().decode([HTTPSBench.Item].self, from: data).count)
        }
        return
      }
      for _ in 0..<n {
        let data = try await HTTPSBench.data(session, request)
        sum &+= UInt64(try JSONDecoder().decode([HTTPSBench.Item].self, from: data).count)
      }
    }
    print("\(Double(elapsed.nanoseconds) / Double(n)) \(sum)")
    return 0
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    return 1
  }
}

/// Stops the nginx the `https.*` scenarios started, if they ran.
func stopHTTPSBenchmarkServer() async {
  guard HTTPSBench.started.load(ordering: .relaxed),
    let fixture = try? await HTTPSBench.fixture.value
  else { return }
  await fixture.nginx.stop()
}

private enum HTTPSBench {
  struct Item: Codable, Sendable {
    var id: Int
    var name: String
  }

  struct Fixture: Sendable {
    let authority: TestCertificateAuthority
    let nginx: NginxTLSServer
    let bundle: URL
    var url: URL { nginx.baseURL.appendingPathComponent("items.json") }
  }

  static let items = Endpoint<NoParameters, NoBody, [Item]>.get("/items.json")
  static let started = Atomic<Bool>(false)

  /// What keeps the scenarios from running here, or `nil`.
  static var missing: String? {
    if NginxServer.executable == nil { return "nginx is not installed" }
    if TestCertificateAuthority.executable == nil { return "openssl is not installed" }
    #if os(Linux)
    if dlopen("libssl.so.3", RTLD_NOW) == nil { return "libssl.so.3 cannot be loaded" }
    #endif
    return nil
  }

  /// One authority and one nginx for the run, serving a 1 KB JSON document, and a bundle of
  /// the system's authorities plus this run's, for the URLSession worker.
  static let fixture = Task { () throws -> Fixture in
    started.store(true, ordering: .relaxed)
    let authority = try await TestCertificateAuthority.shared()
    let nginx = try await NginxTLSServer.start(certificate: authority.server)
    var items: [Item] = []
    var size = 2
    while size < 1000 {
      items.append(Item(id: items.count, name: "item-\(items.count)-abcdefghij"))
      size += 40
    }
    try nginx.publish(
      String(decoding: try JSONEncoder().encode(items), as: UTF8.self), as: "items.json")
    let bundle = authority.directory.file("bundle.pem")
    let system =
      (try? String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8)) ?? ""
    try Data((system + "\n" + authority.certificatePEM).utf8).write(to: bundle)
    return Fixture(authority: authority, nginx: nginx, bundle: bundle)
  }

  /// Whether a worker can run in a mount namespace of its own (`unshare -m`: root, and a
  /// kernel and container that allow it), which the URLSession baseline needs.
  static let workerCanTrustTheAuthority: Bool = {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    probe.arguments = ["-m", "true"]
    probe.standardOutput = FileHandle.nullDevice
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return false }
    probe.waitUntilExit()
    return probe.terminationStatus == 0
  }()

  /// Each scenario sample makes a new client (new connection and handshake) and then
  /// sends `operations` GETs; the worker does the same with a new session.
  static var operations: Int { options.quick ? 30 : 300 }
  /// The GETs of one `https.concurrent-32` sample (and its worker's).
  static var concurrentOperations: Int { options.quick ? 128 : 1280 }

  /// One sample of the URLSession baseline, from a worker process.
  ///
  /// URLSession on Linux (libcurl) trusts only the bundle file it was built with
  /// (`/etc/ssl/certs/ca-certificates.crt`; neither `SSL_CERT_FILE` nor a delegate changes
  /// that), so the worker runs in a mount namespace of its own where that path shows the
  /// bundle with this run's authority: the machine's trust store is never touched. That
  /// needs `unshare -m` (root); without it the row fails and says so.
  ///
  /// `width`: GETs at a time (then `concurrentOperations` of them), else one at a time.
  static func urlSessionSample(inFlight width: Int = 1) async throws -> (Double, UInt64) {
    let fixture = try await fixture.value
    let bench = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
    let system = "/etc/ssl/certs/ca-certificates.crt"
    let count = width > 1 ? "\(concurrentOperations) \(width)" : "\(operations)"
    let script =
      "mount --bind '\(fixture.bundle.path)' \(system) && exec '\(bench)' "
      + "--urlsession-https-worker '\(fixture.url.absoluteString)' \(count)"
    let result = await onDedicatedThread { () -> Result<String, HTTPSBenchError> in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
      process.arguments = ["-m", "sh", "-c", script]
      let output = Pipe()
      let errors = Pipe()
      process.standardOutput = output
      process.standardError = errors
      do { try process.run() } catch {
        return .failure(HTTPSBenchError("unshare cannot run: \(error)"))
      }
      let text = output.fileHandleForReading.readDataToEndOfFile()
      let problem = errors.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        return .failure(
          HTTPSBenchError(
            "the URLSession worker needs `unshare -m` and `mount --bind` (root) to trust the "
              + "test authority: " + String(decoding: problem, as: UTF8.self)))
      }
      return .success(String(decoding: text, as: UTF8.self))
    }
    let fields = try result.get().split(whereSeparator: \.isWhitespace)
    guard fields.count == 2, let sample = Double(fields[0]), let sum = UInt64(fields[1]) else {
      throw HTTPSBenchError("the URLSession worker printed nothing usable")
    }
    return (sample, sum)
  }

  static func data(_ session: URLSession, _ request: URLRequest) async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
      session.dataTask(with: request) { data, _, error in
        if let error {
          continuation.resume(throwing: error)
        } else {
          continuation.resume(returning: data ?? Data())
        }
      }.resume()
    }
  }
}

/// Why the URLSession worker gave no sample.
struct HTTPSBenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
