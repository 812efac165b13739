import Foundation
import Synchronization
import TestSupport
import Testing
import TetherHTTP

/// The network engine under load, through the public `HTTPClient` against real loopback
/// servers: pending requests freeze nothing else, concurrency is the pool's (capped per
/// origin, default 8) and not Dispatch's, streams share threads, and nothing that is not
/// idempotent is sent twice.
// Heavy: its bounds are times (or a flood that loads the CPU), so it takes its turn with the
// tests that load the machine on purpose instead of running beside them.
@Suite(.heavy) struct NetworkEngineTests {
  /// The default per-origin connection cap (ARCHITECTURE.md, "The life of a request"; issue 20).
  static let defaultConnectionCap = 8

  // Guards: each pending request blocked a thread of the shared pool in `poll`; 16 requests
  // to a silent server froze the whole process for 6.4 s (issue 20).
  @Test func requestsToASilentServerFreezeNothingElse() async throws {
    let healthy = try TestHTTPServer()
    healthy.setDocument("{}", at: "/health")
    let healthyClient = HTTPClient(
      baseURL: healthy.baseURL, timeout: .seconds(3), retryPolicy: .none)
    // Started by the silent server's own thread (outside Swift's pool) the moment a second
    // request is pending on it: when an unrelated task starts, and when a GET to the healthy
    // server returns, measured from that moment.
    let measurement = FreezeMeasurement(healthyClient, healthy.url(for: "/health"))
    let silent = try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      if connection.number == 2 { measurement.start() }
      connection.holdUntilClosed()
    }
    let stuck = HTTPClient(baseURL: silent.baseURL, timeout: .seconds(3), retryPolicy: .none)
    let pending = (0..<16).map { index in
      Task { () -> HTTPError? in
        do throws(HTTPError) {
          _ = try await stuck.response(for: HTTPRequest(url: silent.url(for: "/\(index)")))
          return nil
        } catch {
          return error
        }
      }
    }
    try await waitUntil("a second request pending on the silent server", timeout: .seconds(10)) {
      measurement.hasStarted
    }
    let (unrelatedStart, healthyAnswer) = try await measurement.results()
    // Bounds with room for a loaded 2-core CI running the whole suite at once; the freeze
    // they guard against lasted 6.4-8.5 s.
    #expect(unrelatedStart < .seconds(2), "an unrelated task started after \(unrelatedStart)")
    #expect(healthyAnswer.status == 200)
    #expect(
      healthyAnswer.elapsed < .seconds(3), "a GET to a healthy server took \(healthyAnswer.elapsed)"
    )
    // And every pending request still ends, by its own timeout.
    for task in pending {
      let outcome = try await withTimeout(.seconds(15), "a pending request to end") {
        await task.value
      }
      if case .timedOut? = outcome { continue }
      Issue.record("a request to the silent server ended with \(String(describing: outcome))")
    }
  }

  // Guards: concurrency was capped by Dispatch's threads (32 GETs in flight, 6 sockets open),
  // and the pool must never open more than its per-origin cap.
  @Test func thirtyTwoRequestsOpenTheCapOfConnectionsAtOnceAndNeverMore() async throws {
    let arrived = Atomic<Int>(0)
    let fallbacks = Atomic<Int>(0)
    let server = try HostileServer { connection in
      while try connection.readRequest() != nil {
        // Each answer waits until as many requests as the cap have arrived, so the client
        // must hold that many connections open at once (bounded: 5 s, counted when used up).
        arrived.add(1, ordering: .relaxed)
        let reached = connection.wait(
          until: { arrived.load(ordering: .relaxed) >= Self.defaultConnectionCap },
          timeout: .seconds(5))
        if !reached { fallbacks.add(1, ordering: .relaxed) }
        try connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      }
    }
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(20), retryPolicy: .none)
    let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
      for index in 0..<32 {
        group.addTask {
          try await client.response(for: HTTPRequest(url: server.url(for: "/\(index)"))).body
        }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(bodies.count == 32)
    #expect(bodies.allSatisfy { $0 == Data("ok".utf8) })
    #expect(server.requestCount == 32)
    #expect(
      server.peakOpenConnectionCount >= Self.defaultConnectionCap,
      "at most \(server.peakOpenConnectionCount) connections were open at once")
    #expect(
      server.peakOpenConnectionCount <= Self.defaultConnectionCap,
      "\(server.peakOpenConnectionCount) connections to one origin were open at once")
    // Had fewer connections been open, the answers would have waited for the 5 s fallback:
    // counted on the server's threads, not read off a wall clock that load can stretch.
    #expect(fallbacks.load(ordering: .relaxed) == 0, "answers waited for the fallback")
  }

  // Guards: a thread per stream (200 SSE streams ran 205 threads) and sockets left open after
  // the streams were cancelled. Measured in a second process that does nothing else.
  @Test func twoHundredStreamsShareAFewThreadsAndCloseEverySocket() async throws {
    let server = try EventFanoutServer(event: "hello")
    let probe = try ChildProcess(
      ["sse-streams", server.url(for: "/events").absoluteString, "200"],
      executableURL: Self.probeExecutable())
    let before = try await probe.waitForLine(matching: { $0.hasPrefix("before ") })
    let during = try await probe.waitForLine(
      matching: { $0.hasPrefix("received ") }, timeout: .seconds(60))
    let after = try await probe.waitForLine(
      matching: { $0.hasPrefix("after ") }, timeout: .seconds(30))
    _ = try await probe.waitForExit()
    let (threadsBefore, fdsBefore) = (Self.number(before, "threads"), Self.number(before, "fds"))
    #expect(Self.number(during, "received") == 200, "\(during)")
    #expect(
      Self.number(during, "threads") - threadsBefore <= 8,
      "threads went from \(threadsBefore) to \(Self.number(during, "threads")) for 200 streams")
    // Room for the engine's own descriptors (epoll, wake-ups); 200 leaked sockets do not fit.
    #expect(
      Self.number(after, "fds") <= fdsBefore + 8,
      "descriptors went from \(fdsBefore) to \(Self.number(after, "fds")) after cancelling")
  }

  // Guards: a POST must never be sent twice, even when the connection it went out on turns
  // out to be dead (the server may have acted on it).
  @Test func aPostOnAConnectionTheServerClosedIsNeverSentTwice() async throws {
    let server = try HostileServer { connection in
      while let request = try connection.readRequest() {
        if request.method == "GET" && connection.number == 1 {
          // Answered as if kept alive, then the server's side is closed at once; it still
          // reads, so a request sent on this connection is seen (and counted) here.
          try connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
          connection.closeWrite()
        } else {
          try connection.send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nposted")
        }
      }
    }
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(10), retryPolicy: .none)
    #expect(try await client.response(for: HTTPRequest(url: server.url(for: "/a"))).status == 200)
    let outcome: Result<HTTPResponseMessage, HTTPError>
    do {
      outcome = .success(
        try await client.response(
          for: HTTPRequest(method: .post, url: server.url(for: "/post"), body: Data("{}".utf8))))
    } catch {
      outcome = .failure(error)
    }
    // Either the client saw the connection was closed and used a new one (then it succeeds),
    // or it sent the POST on the dead one and reports a typed error without sending it again.
    if case .success(let response) = outcome {
      #expect(response.body == Data("posted".utf8))
    }
    #expect(server.requests.filter { $0.method == "POST" }.count <= 1, "\(server.requests)")
    #expect(try await client.response(for: HTTPRequest(url: server.url(for: "/b"))).status == 200)
  }

  static func probeExecutable() throws -> URL {
    try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("tether-http-probe")
  }

  /// The integer after `word` in a probe line such as `before threads 5 fds 12`.
  static func number(_ line: String, _ word: String) -> Int {
    let words = line.split(separator: " ")
    guard let index = words.firstIndex(where: { $0 == word }), index + 1 < words.count else {
      return -1
    }
    return Int(words[index + 1]) ?? -1
  }
}

/// Starts an unrelated task and a healthy GET from whatever thread calls `start()`, and keeps
/// how long each took from that moment.
private final class FreezeMeasurement: Sendable {
  private struct State {
    var startedAt: ContinuousClock.Instant?
    var unrelated: Task<ContinuousClock.Instant, Never>?
    var healthy: Task<(status: Int, end: ContinuousClock.Instant), any Error>?
  }

  private let client: HTTPClient
  private let url: URL
  private let state = LockedState(State())

  init(_ client: HTTPClient, _ url: URL) {
    self.client = client
    self.url = url
  }

  var hasStarted: Bool { state.withLock { $0.startedAt != nil } }

  func start() {
    let client = client
    let url = url
    state.withLock { state in
      guard state.startedAt == nil else { return }
      state.startedAt = .now
      state.unrelated = Task.detached { ContinuousClock.now }
      state.healthy = Task.detached {
        let response = try await client.response(for: HTTPRequest(url: url))
        return (status: response.status, end: ContinuousClock.now)
      }
    }
  }

  /// How long after `start()` the unrelated task began, and the healthy GET's status and time.
  func results() async throws -> (Duration, (status: Int, elapsed: Duration)) {
    let (startedAt, unrelated, healthy) = state.withLock {
      ($0.startedAt, $0.unrelated, $0.healthy)
    }
    guard let startedAt, let unrelated, let healthy else {
      throw TimeoutError(waitingFor: "the measurement to start", after: .zero)
    }
    let began = await unrelated.value
    let answer = try await healthy.value
    return (began - startedAt, (answer.status, answer.end - startedAt))
  }
}
