import Foundation
import Synchronization
import TestSupport
import Testing
import Tether
import TetherHTTP

/// Timeouts that always end, a floor under SSE reconnection, and an early answer read while a
/// body is still being sent: the engine's deadlines, through the public API against loopback
/// servers that accept and then misbehave.
// Heavy: its bounds are times (or a flood that loads the CPU), so it takes its turn with the
// tests that load the machine on purpose instead of running beside them.
@Suite(.heavy) struct NetworkEngineTimeoutTests {
  /// Room for a loaded two-core CI machine on top of a timeout: the full parallel suite has
  /// resumed continuations up to 7 s late while its 1,200 tests start. Still well under the
  /// 15 s after which the regressions these tests guard (no deadline at all) are caught.
  static let slack = Duration.seconds(8)

  /// A server that reads each request and never answers.
  private func silentServer() throws -> HostileServer {
    try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      connection.holdUntilClosed()
    }
  }

  private func isTimedOut(_ error: any Error) -> Bool {
    guard case .timedOut = error as? HTTPError else { return false }
    return true
  }

  // Guards: a stream whose server never sends a head must end by the client's timeout.
  @Test func aStreamingResponseWithoutAHeadTimesOut() async throws {
    let server = try silentServer()
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(1), retryPolicy: .none)
    let started = ContinuousClock.now
    let outcome = try await withTimeout(.seconds(15), "streamingResponse to end") {
      do throws(HTTPError) {
        let response = try await client.streamingResponse(
          for: HTTPRequest(url: server.url(for: "/stream")))
        return "a head with status \(response.status)"
      } catch {
        guard case .timedOut = error else { return "\(error)" }
        return "timedOut"
      }
    }
    let elapsed = ContinuousClock.now - started
    #expect(outcome == "timedOut")
    #expect(elapsed < .seconds(1) + Self.slack, "it ended after \(elapsed)")
    #expect(server.requestCount == 1)
  }

  // Guards: `serverSentEvents` ran without any deadline and waited forever for a head.
  @Test func serverSentEventsWithoutAHeadTimeOut() async throws {
    let server = try silentServer()
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(1), retryPolicy: .none)
    let started = ContinuousClock.now
    let outcome = try await withTimeout(.seconds(1) + Self.slack, "the event stream to end") {
      do {
        for try await _ in client.serverSentEvents(
          for: HTTPRequest(url: server.url(for: "/events")))
        {
          return "an event"
        }
        return "the end of the stream"
      } catch let error as HTTPError {
        guard case .timedOut = error else { return "\(error)" }
        return "timedOut"
      } catch {
        return "an untyped \(error)"
      }
    }
    #expect(outcome == "timedOut")
    #expect(ContinuousClock.now - started >= .milliseconds(900), "not before the timeout")
  }

  // Guards: a server trickling a byte every 100 ms must not keep a buffered request alive past
  // its timeout (a per-read timer alone never fires).
  @Test func aTricklingAnswerTimesOutNearTheTimeout() async throws {
    let answer = "HTTP/1.1 200 OK\r\nContent-Length: 64\r\n\r\n" + String(repeating: "x", count: 64)
    let server = try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      connection.trickle(Data(answer.utf8), every: .milliseconds(100))
      connection.holdUntilClosed()
    }
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(1), retryPolicy: .none)
    let started = ContinuousClock.now
    await #expect {
      try await client.response(for: HTTPRequest(url: server.url(for: "/slow")))
    } throws: { isTimedOut($0) }
    let elapsed = ContinuousClock.now - started
    #expect(elapsed >= .milliseconds(900), "it ended after \(elapsed), before the timeout")
    #expect(elapsed < .seconds(1) + Self.slack, "it ended after \(elapsed)")
  }

  // Guards: a connect that is never answered (the listener's queue is full, SYNs are dropped)
  // must end by the timeout.
  @Test func aConnectNobodyAnswersTimesOut() async throws {
    let blackhole = try await Blackhole.start()
    let client = HTTPClient(baseURL: blackhole.baseURL, timeout: .seconds(1), retryPolicy: .none)
    let started = ContinuousClock.now
    let outcome = try await withTimeout(.seconds(15), "the request to end") {
      do throws(HTTPError) {
        _ = try await client.response(for: HTTPRequest(url: blackhole.baseURL))
        return "a response"
      } catch {
        guard case .timedOut = error else { return "\(error)" }
        return "timedOut"
      }
    }
    let elapsed = ContinuousClock.now - started
    #expect(outcome == "timedOut")
    #expect(elapsed < .seconds(1) + Self.slack, "it ended after \(elapsed)")
  }

  // Guards: `retry: 0` on an SSE stream that ends at once made 2,300 reconnections in 3 s (no
  // floor, and a clean end reset the failure count). The floor is 1 s unless the server asks
  // for more.
  @Test func serverSentEventsReconnectNoMoreThanOncePerSecond() async throws {
    let server = try TestHTTPServer()
    server.setDocument(json(Item(id: 1, name: "one")), at: "/items/1")
    server.injectPersistently(
      .rawResponse(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 10\r\n\r\n"
          + "retry: 0\n\n"), at: "/items/1/events")
    let client = HTTPClient(baseURL: server.baseURL)
    let events = Endpoint<ItemPath, NoBody, NoBody>.get("/items/{id}/events")
    @SharedReader(
      .http(
        Catalog.item, ItemPath(id: "1"), client: client,
        updates: .serverSentEvents(events, ItemPath(id: "1"))))
    var item = Item(id: 0, name: "default")
    try await server.waitForRequests(3, at: "/items/1/events", timeout: .seconds(20))
    let arrivals = server.requests(at: "/items/1/events").prefix(3).map(\.arrival)
    for (earlier, later) in zip(arrivals, arrivals.dropFirst()) {
      #expect(later - earlier >= .milliseconds(900), "reconnected after \(later - earlier)")
    }
    // Each reconnection may catch up with one GET, no more.
    let streams = server.requestCount(at: "/items/1/events")
    #expect(server.requestCount(at: "/items/1") <= streams + 2)
    #expect(item.name == "one")
  }

  // Guards: a 32 MB POST answered early with 413 ended as `timedOut` after the whole deadline
  // (the body was written before anything was read).
  @Test func anEarlyAnswerEndsAnUploadTheServerStoppedReading() async throws {
    let server = try HostileServer { connection in
      guard try connection.readRequestHead() != nil else { return }
      try connection.send(
        "HTTP/1.1 413 Content Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!")
      // The server reads no more: the rest of the body piles up in the socket buffers.
      connection.holdWithoutReading()
    }
    let upload = Endpoint<NoParameters, Data, NoBody>(
      method: .post, path: "/upload", encodeBody: { ($0, "application/octet-stream") },
      decodeResponse: { _ in NoBody() })
    let client = HTTPClient(baseURL: server.baseURL, timeout: .seconds(10), retryPolicy: .none)
    let started = ContinuousClock.now
    await #expect {
      try await client.send(upload, body: Data(repeating: 0x55, count: 32 << 20))
    } throws: { error in
      guard case .status(413, _, _, _) = error as? HTTPError else { return false }
      return true
    }
    let elapsed = ContinuousClock.now - started
    #expect(elapsed < .seconds(5), "the 413 arrived after \(elapsed) (timeout 10 s)")
  }
}
