import Foundation
import TestSupport
import Tether
import TetherHTTP

// The baselines are a bare URLSession, so this file (a benchmark, not a library module) names
// URLSession's own module; Tether's libraries reach the network only through TetherHTTP.
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `http.*` scenarios and their URLSession baselines, against the loopback server.
func httpBenchmarks() -> [Benchmark] {
  [
    Benchmark(
      "baseline.urlsession-get-1k", note: "bare URLSession data task + JSONDecoder, 1 KB",
      operations: 300
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let session = URLSession(configuration: .ephemeral)
      defer { session.invalidateAndCancel() }
      let url = server.url(for: "/items.json")
      var sum: UInt64 = 0
      for _ in 0..<n {
        let (data, _) = try await HTTPBench.data(session, URLRequest(url: url))
        sum &+= UInt64(try JSONDecoder().decode([HTTPBench.Item].self, from: data).count)
      }
      return sum
    },
    Benchmark(
      "http.endpoint-get-1k", baseline: "baseline.urlsession-get-1k",
      note: "typed Endpoint GET, decoded; target <= 0.35x", operations: 300
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let client = HTTPClient(baseURL: server.baseURL)
      var sum: UInt64 = 0
      for _ in 0..<n { sum &+= UInt64(try await client.send(HTTPBench.items).count) }
      return sum
    },
    Benchmark(
      "baseline.urlsession-get-304",
      note: "bare conditional URLSession GET answered 304 (timed after the first answer)",
      operations: 300
    ) { n, stopwatch in
      let (server, document) = try HTTPBench.server()
      defer { server.stop() }
      let session = URLSession(configuration: .ephemeral)
      defer { session.invalidateAndCancel() }
      var request = URLRequest(url: server.url(for: "/items.json"))
      request.setValue(document.etag, forHTTPHeaderField: "If-None-Match")
      var sum = UInt64(
        (try await HTTPBench.data(session, request).1 as? HTTPURLResponse)?.statusCode ?? 0)
      stopwatch.start()
      for _ in 0..<n {
        let (_, response) = try await HTTPBench.data(session, request)
        sum &+= UInt64((response as? HTTPURLResponse)?.statusCode ?? 0)
      }
      stopwatch.stop()
      return sum
    },
    Benchmark(
      "http.poll-304", baseline: "baseline.urlsession-get-304",
      note: "the .http key's conditional poll request through HTTPClient (timed after the "
        + "first answer); target <= 0.25x",
      operations: 300
    ) { n, stopwatch in
      let (server, document) = try HTTPBench.server()
      defer { server.stop() }
      let client = HTTPClient(baseURL: server.baseURL)
      var request = try client.request(for: HTTPBench.items, NoParameters(), body: NoBody())
      request.setHeader("If-None-Match", document.etag)
      var sum = UInt64(try await client.response(for: request).status)
      stopwatch.start()
      for _ in 0..<n { sum &+= UInt64(try await client.response(for: request).status) }
      stopwatch.stop()
      return sum
    },
    Benchmark(
      "baseline.urlsession-concurrent-32",
      note: "bare URLSession data tasks, 32 in flight, ns per completed request", operations: 640
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let session = URLSession(configuration: .ephemeral)
      defer { session.invalidateAndCancel() }
      let request = URLRequest(url: server.url(for: "/items.json"))
      return try await Benchmark.inFlight(32, total: n) {
        UInt64(try await HTTPBench.data(session, request).0.count)
      }
    },
    Benchmark(
      "http.concurrent-32", baseline: "baseline.urlsession-concurrent-32",
      note: "GETs through HTTPClient (the transport), 32 in flight, ns per completed request; "
        + "target <= 0.15x", operations: 640
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let client = HTTPClient(baseURL: server.baseURL)
      let request = try client.request(for: HTTPBench.items, NoParameters(), body: NoBody())
      return try await Benchmark.inFlight(32, total: n) {
        UInt64(try await client.response(for: request).body.count)
      }
    },
    Benchmark(
      "baseline.urlsession-concurrent-32-decoded",
      note: "bare URLSession data tasks + JSONDecoder, 32 in flight, ns per completed request",
      operations: 640
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let session = URLSession(configuration: .ephemeral)
      defer { session.invalidateAndCancel() }
      let request = URLRequest(url: server.url(for: "/items.json"))
      // The same work as the scenario: the GET and the decoding of its 1 KB answer.
      return try await Benchmark.inFlight(32, total: n) {
        let (data, _) = try await HTTPBench.data(session, request)
        return UInt64(try JSONDecoder().decode([HTTPBench.Item].self, from: data).count)
      }
    },
    Benchmark(
      "http.concurrent-32-decoded", baseline: "baseline.urlsession-concurrent-32-decoded",
      note: "typed Endpoint GETs, decoded, 32 in flight, ns per completed request "
        + "(decoding is the same JSONDecoder work on both sides)", operations: 640
    ) { n in
      let (server, _) = try HTTPBench.server()
      defer { server.stop() }
      let client = HTTPClient(baseURL: server.baseURL)
      return try await Benchmark.inFlight(32, total: n) {
        UInt64(try await client.send(HTTPBench.items).count)
      }
    },
    Benchmark(
      "http.update-contended-4", baseline: "baseline.urlsession-get-1k",
      note: "4 holders x 25 updates on one .http resource (GET, then PUT with If-Match; a 412 "
        + "retried after jittered back-off), ns per successful update; exact",
      operations: 100
    ) { n in
      let server = try TestHTTPServer()
      defer { server.stop() }
      let resource = WritableResource(#"{"count":0}"#)
      server.serve(resource, at: "/counter")
      let client = HTTPClient(baseURL: server.baseURL)
      // The query makes each holder's key its own reference, as another process's would be.
      let holders = (0..<4).map { writer in
        Shared(
          wrappedValue: HTTPBench.Counter(count: -1),
          .http(
            HTTPBench.counter, save: HTTPBench.saveCounter, HTTPBench.Writer(writer: writer),
            client: client, every: .seconds(3600)))
      }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for holder in holders {
          group.addTask { for _ in 0..<(n / 4) { _ = try await holder.update { $0.count += 1 } } }
        }
        try await group.waitForAll()
      }
      let stored = try JSONDecoder().decode(HTTPBench.Counter.self, from: resource.document.body)
      guard stored.count == n / 4 * 4 else {
        throw HTTPError.invalidRequest(
          "contended updates ended at \(stored.count), not \(n / 4 * 4)")
      }
      return UInt64(stored.count)
    },
    Benchmark(
      "http.sse-propagation",
      note: "ns from a server-sent event written to the @SharedReader holding it; target <= 2 ms"
    ) {
      try await HTTPBench.ssePropagation()
    },
  ]
}

private enum HTTPBench {
  struct Item: Codable, Sendable {
    var id: Int
    var name: String
  }

  static let items = Endpoint<NoParameters, NoBody, [Item]>.get("/items.json")

  struct Counter: Codable, Sendable {
    var count: Int
  }

  /// One writer of the contended counter: its number goes in the query.
  struct Writer: Encodable, Sendable {
    var writer: Int
  }

  static let counter = Endpoint<Writer, NoBody, Counter>.get("/counter")
  static let saveCounter = Endpoint<Writer, Counter, Counter>.put("/counter")

  /// A loopback server with a 1 KB JSON document.
  static func server() throws -> (TestHTTPServer, HTTPDocument) {
    let server = try TestHTTPServer()
    var items: [Item] = []
    var size = 2
    while size < 1000 {
      let item = Item(id: items.count, name: "item-\(items.count)-abcdefghij")
      items.append(item)
      size += 40
    }
    let document = try server.setJSONDocument(items, at: "/items.json")
    return (server, document)
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

  struct Status: Codable, Equatable, Sendable {
    var revision: Int
  }

  static let status = Endpoint<NoParameters, NoBody, Status>.get("/status.json")
  static let statusEvents = Endpoint<NoParameters, NoBody, NoBody>.get("/status.events")

  /// One sample: how long an event takes from the server's write to the holder's value.
  static func ssePropagation() async throws -> (sample: Double, checksum: UInt64) {
    let server = try TestHTTPServer()
    defer { server.stop() }
    try server.setJSONDocument(Status(revision: 0), at: "/status.json")
    let stream = HTTPStream.serverSentEvents()
    server.injectPersistently(.stream(stream), at: "/status.events")
    let client = HTTPClient(baseURL: server.baseURL)
    let reader = SharedReader(
      wrappedValue: Status(revision: -1),
      .http(status, client: client, updates: .serverSentEvents(statusEvents)))
    try await stream.waitForClients(1)
    try await waitUntil("the loaded value") { reader.wrappedValue.revision == 0 }
    var samples: [Double] = []
    for revision in 1...21 {
      let start = ContinuousClock.now
      stream.sendEvent(#"{"revision":\#(revision)}"#)
      while reader.wrappedValue.revision != revision { await Task.yield() }
      samples.append(Double((ContinuousClock.now - start).nanoseconds))
    }
    samples.sort()
    return (samples[samples.count / 2], UInt64(reader.wrappedValue.revision))
  }
}
