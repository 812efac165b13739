import Foundation
import Tether

/// Plain `http` on Tether's own event-driven engine: one ``ConnectionPool`` per origin for
/// buffered requests, a connection of its own for each stream, all of it on the process's
/// few ``EventLoop`` threads. No request ever blocks a thread of Swift's cooperative pool or
/// of Dispatch: a caller suspends on a continuation that a loop resumes.
///
/// One engine per ``HTTPClient``: its pools, and their caps, are that client's.
final class SocketEngine: Transport {
  let group: EventLoopGroup
  let maximumConnectionsPerOrigin: Int
  let connectTimeout: Double
  let idleTimeout: Double
  private let pools = Lock<[String: ConnectionPool]>([:])

  init(
    group: EventLoopGroup, maximumConnectionsPerOrigin: Int, connectTimeout: Double,
    idleTimeout: Double
  ) {
    self.group = group
    self.maximumConnectionsPerOrigin = max(1, maximumConnectionsPerOrigin)
    self.connectTimeout = connectTimeout
    self.idleTimeout = idleTimeout
  }

  /// Fails what waits and closes idle connections; the engine takes nothing new afterwards.
  func shutDown() {
    let all = pools.withLock { pools -> [ConnectionPool] in
      defer { pools = [:] }
      return Array(pools.values)
    }
    for pool in all { pool.shutDown() }
  }

  private func pool(for url: URL) -> ConnectionPool {
    let host = url.host ?? ""
    let port = url.port ?? 80
    let key = "\(host):\(port)"
    return pools.withLock { pools in
      if let pool = pools[key] { return pool }
      let pool = ConnectionPool(
        loop: group.nextLoop(), host: host, port: port,
        origin: "http://\(HTTP1RequestSerializer.hostHeader(of: url))",
        maximumConnections: maximumConnectionsPerOrigin,
        connectTimeout: connectTimeout, idleTimeout: idleTimeout)
      pools[key] = pool
      return pool
    }
  }

  // MARK: - Transport

  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    let pool = pool(for: request.url)
    let deadline = Monotonic.deadline(after: timeout)
    let id = Lock<Int?>(nil)
    do {
      return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          let exchange = BufferedExchange(
            request: request, limit: limit, deadline: deadline, timeout: timeout,
            continuation: continuation)
          id.withLock { $0 = exchange.id }
          pool.enqueue(exchange)
          // A cancellation that came before `id` was set found nothing to abandon.
          if Task.isCancelled { pool.abandon(exchange.id, .cancelled) }
        }
      } onCancel: {
        if let id = id.withLock({ $0 }) { pool.abandon(id, .cancelled) }
      }
    } catch let error as HTTPError {
      throw error
    } catch {
      throw .cancelled
    }
  }

  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double, highWater: Int
  ) async throws(HTTPError) -> StreamedResponse {
    let exchange = StreamExchange(
      loop: group.nextLoop(), request: request, headTimeout: headTimeout,
      idleTimeout: idleTimeout)
    do {
      let (head, body) = try await exchange.start(highWater: highWater)
      return StreamedResponse(status: head.status, headers: head.headers, body: body)
    } catch let error as HTTPError {
      throw error
    } catch {
      throw .cancelled
    }
  }
}
