import Foundation
import Tether

/// `http` and `https` on Tether's own event-driven engine: one ``ConnectionPool`` per origin
/// (and proxy) for buffered requests, a connection of its own for each stream, all of it on
/// the process's few ``EventLoop`` threads. No request ever blocks a thread of Swift's
/// cooperative pool or of Dispatch: a caller suspends on a continuation that a loop resumes.
///
/// `https` needs OpenSSL (``OpenSSLLibrary``): where it cannot be loaded the engine does not
/// carry `https` (``carries(_:)``) and the executor hands those requests to URLSession.
///
/// One engine per ``HTTPClient``: its pools, and their caps, are that client's.
final class SocketEngine: Transport {
  let group: EventLoopGroup
  let maximumConnectionsPerOrigin: Int
  let connectTimeout: Double
  let idleTimeout: Double
  /// The client's proxies (read from the environment when the client was made, by default).
  let proxy: HTTPProxy
  /// What the TLS context is made from: the client's extra authorities and identity.
  let tlsConfiguration: TLSContextCache.Configuration
  /// Whether OpenSSL loads in this process, so that `https` goes over the engine.
  let carriesHTTPS: Bool
  private let pools = Lock<[String: ConnectionPool]>([:])
  private let tlsContext = Lock<TLSContext?>(nil)

  init(
    group: EventLoopGroup, maximumConnectionsPerOrigin: Int, connectTimeout: Double,
    idleTimeout: Double, proxy: HTTPProxy = .none,
    tlsConfiguration: TLSContextCache.Configuration = .init(),
    openSSL: OpenSSLLibrary.Names = .system
  ) {
    self.group = group
    self.maximumConnectionsPerOrigin = max(1, maximumConnectionsPerOrigin)
    self.connectTimeout = connectTimeout
    self.idleTimeout = idleTimeout
    self.proxy = proxy
    self.tlsConfiguration = tlsConfiguration
    let library = openSSL == .system ? OpenSSLLibrary.shared : OpenSSLLibrary.load(openSSL)
    carriesHTTPS = (try? library.get()) != nil
  }

  /// Whether the engine carries requests to `url`: `http` always, `https` where OpenSSL loads.
  func carries(_ url: URL) -> Bool {
    switch url.scheme?.lowercased() {
    case "http": true
    case "https": carriesHTTPS
    default: false
    }
  }

  /// The client's TLS context, made on the first `https` request (the process's
  /// ``TLSContextCache`` shares it with every client configured alike).
  private func context(for url: URL) throws(HTTPError) -> TLSContext {
    if let made = tlsContext.withLock({ $0 }) { return made }
    do throws(TLSFailure) {
      let made = try TLSContextCache.shared.context(for: tlsConfiguration)
      tlsContext.withLock { $0 = made }
      return made
    } catch {
      throw error.httpError(url: HTTPError.redacted(url))
    }
  }

  /// How requests to `url` travel: directly or through the proxy, with TLS for `https`.
  func route(for url: URL) throws(HTTPError) -> ConnectionRoute {
    let secure = url.scheme?.lowercased() == "https"
    return ConnectionRoute.to(
      url, proxy: try proxy.proxy(for: url), tls: secure ? try context(for: url) : nil)
  }

  /// Fails what waits and closes idle connections; the engine takes nothing new afterwards.
  func shutDown() {
    let all = pools.withLock { pools -> [ConnectionPool] in
      defer { pools = [:] }
      return Array(pools.values)
    }
    for pool in all { pool.shutDown() }
  }

  private func pool(for route: ConnectionRoute) -> ConnectionPool {
    pools.withLock { pools in
      if let pool = pools[route.key] { return pool }
      let pool = ConnectionPool(
        loop: group.nextLoop(), route: route,
        maximumConnections: maximumConnectionsPerOrigin,
        connectTimeout: connectTimeout, idleTimeout: idleTimeout)
      pools[route.key] = pool
      return pool
    }
  }

  // MARK: - Transport

  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    let pool = pool(for: try route(for: request.url))
    let deadline = Monotonic.deadline(after: timeout)
    let id = Lock<Int?>(nil)
    do {
      return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          let exchange = BufferedExchange(
            request: request, route: pool.route, limit: limit, deadline: deadline,
            timeout: timeout, continuation: continuation)
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
      loop: group.nextLoop(), request: request, route: try route(for: request.url),
      headTimeout: headTimeout, idleTimeout: idleTimeout)
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
