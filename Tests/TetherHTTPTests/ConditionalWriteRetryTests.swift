import Foundation
import TestSupport
import Testing
import TetherHTTP

/// A conditional write whose outcome is unknown is never sent twice: the second attempt would
/// meet the first one's write as a conflict, and a caller that re-applies its change on
/// conflicts (`update` on an `.http` key) would apply it twice.
@Suite struct ConditionalWriteRetryTests {
  /// A server that reads each request and never answers: every attempt times out after the
  /// server has the whole request, so whether it was applied is unknown.
  private func silentServer() throws -> HostileServer {
    try HostileServer { connection in
      guard try connection.readRequest() != nil else { return }
      connection.holdUntilClosed()
    }
  }

  private func put(_ server: HostileServer, headers: [String: String]) async -> HTTPError? {
    let client = HTTPClient(
      baseURL: server.baseURL, timeout: .milliseconds(300),
      retryPolicy: HTTPRetryPolicy(
        maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5)))
    let request = HTTPRequest(
      method: .put, url: server.url(for: "/counter"),
      headers: headers.merging(["Content-Type": "application/json"]) { $1 }, body: Data("1".utf8))
    do {
      _ = try await client.response(for: request)
      return nil
    } catch {
      return error
    }
  }

  @Test(arguments: ["If-Match", "If-None-Match"])
  func aConditionalPutThatTimedOutIsNotSentAgain(header: String) async throws {
    let server = try silentServer()
    let error = await put(server, headers: [header: header == "If-Match" ? "\"v1\"" : "*"])
    guard case .timedOut = error else {
      Issue.record("expected a timeout, got \(String(describing: error))")
      return
    }
    #expect(server.requestCount == 1)
  }

  @Test func anUnconditionalPutThatTimedOutIsStillRetried() async throws {
    let server = try silentServer()
    let error = await put(server, headers: [:])
    guard case .timedOut = error else {
      Issue.record("expected a timeout, got \(String(describing: error))")
      return
    }
    try await waitUntil("every attempt reached the server") { server.requestCount == 3 }
  }
}
