import Foundation
import Streams
import Tether
import TetherSupport

/// Something that answers a client's requests in the process, instead of a network: the seam
/// TetherTesting's `HTTPStubTransport` and TetherEtcd's in-memory cluster plug into.
///
/// It replaces only what moves bytes. The client's executor still runs the interceptors, the
/// retry policy, the request checks, redirects and the deadline over it, so a client on a
/// stand-in behaves as it would on the network. The stand-in follows no redirect itself.
package protocol HTTPExchangeHandler: Sendable {
  /// The whole answer to `request`, whatever its status. A thrown ``HTTPError`` is what the
  /// network would have failed with (unreachable, timed out, …).
  func respond(to request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage
  /// The head of the answer to `request`, with its body still arriving chunk by chunk.
  func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamingResponse
}

extension HTTPClient {
  /// Makes every request of this client go to `handler` instead of the network (call it
  /// right after creating the client, before any request).
  package func exchange(with handler: any HTTPExchangeHandler) {
    executor.replacement.withLock { $0 = HandlerTransport(handler: handler) }
  }

  /// Makes every request of this client go over `transport` instead of the engine (how
  /// TetherURLSession's `useURLSession()` opts a client into URLSession). A transport it
  /// replaces is shut down.
  package func carry(over transport: any Transport) {
    let replaced = executor.replacement.withLock { current in
      defer { current = transport }
      return current
    }
    replaced?.shutDown()
  }
}

/// An ``HTTPExchangeHandler`` as a ``Transport``: it keeps the limits a network transport
/// keeps (the attempt's deadline, the largest body), so latency and size behave the same, and
/// hands the handler the request with its headers as the socket transport sends them.
private struct HandlerTransport: Transport {
  let handler: any HTTPExchangeHandler

  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    let url = HTTPError.redacted(request.url)
    let sent = HTTP1RequestSerializer.withHeadersAsSent(request)
    let response = try await Self.within(timeout, url: url) { () throws(HTTPError) in
      try await handler.respond(to: sent)
    }
    guard response.body.count <= limit else { throw .tooLarge(url: url, limit: limit) }
    var headers: [String: String] = [:]
    for (name, value) in response.headers { headers[name.lowercased()] = value }
    return RawHTTPResponse(status: response.status, headers: headers, body: response.body)
  }

  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double, highWater: Int
  ) async throws(HTTPError) -> StreamedResponse {
    let sent = HTTP1RequestSerializer.withHeadersAsSent(request)
    let response = try await Self.within(headTimeout, url: HTTPError.redacted(request.url)) {
      () throws(HTTPError) in try await handler.stream(sent)
    }
    let pump = Lock<Task<Void, Never>?>(nil)
    let body = StreamBody(
      highWater: highWater, resume: {}, cancel: { pump.withLock { $0 }?.cancel() })
    let chunks = response.body
    pump.withLock { pumping in
      pumping = Task {
        do {
          for try await chunk in chunks { _ = body.append(chunk) }
          body.finish(nil)
        } catch {
          body.finish(
            (error as? HTTPError)
              ?? (error is CancellationError
                ? .cancelled
                : .unreachable(
                  url: HTTPError.redacted(request.url), reason: "\(error)")))
        }
      }
    }
    var headers: [String: String] = [:]
    for (name, value) in response.headers { headers[name.lowercased()] = value }
    return StreamedResponse(status: response.status, headers: headers, body: body)
  }

  func shutDown() {}

  /// `operation`'s answer, or ``HTTPError/timedOut(url:after:)`` once `seconds` pass first.
  private static func within<T: Sendable>(
    _ seconds: Double, url: String,
    _ operation: @escaping @Sendable () async throws(HTTPError) -> T
  ) async throws(HTTPError) -> T {
    let outcome = await withTaskGroup(of: Result<T, HTTPError>?.self) { group in
      group.addTask {
        do throws(HTTPError) {
          return .success(try await operation())
        } catch {
          return .failure(error)
        }
      }
      group.addTask {
        do {
          try await Task.sleep(for: .nanoseconds(Int64(min(seconds, 1e9) * 1e9)))
          return .failure(.timedOut(url: url, after: seconds))
        } catch {
          return nil
        }
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first ?? .failure(.cancelled)
    }
    return try outcome.get()
  }
}

extension HTTPStreamingResponse {
  /// A streamed answer made in the process, for ``HTTPExchangeHandler``s.
  package init(
    status: Int, headers: [String: String], streaming body: AsyncThrowingStream<Data, any Error>
  ) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}
