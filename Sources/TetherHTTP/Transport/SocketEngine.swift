import Foundation
import Streams
import Synchronization
import Tether
import TetherSupport

/// `http` and `https` on Tether's own event-driven engine: one ``OriginPools`` per origin
/// (and proxy) for buffered requests, a ``ConnectionPool`` on each I/O thread; a connection
/// of its own for each stream; all of it on the process's few ``EventLoop`` threads. No
/// request ever blocks a thread of Swift's cooperative pool or of Dispatch: a caller suspends
/// on a continuation that a loop resumes.
///
/// `https` needs OpenSSL (``OpenSSLLibrary``): where it cannot be loaded the engine does not
/// carry `https` (``carries(_:)``), and the executor fails those requests with a typed reason
/// (a client that opted into URLSession with TetherURLSession does not use this engine).
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
  private let pools = Lock<[String: OriginPools]>([:])
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
    try destination(for: url).route
  }

  /// Where a request goes: its route and the pool that carries it.
  private struct Destination {
    /// `scheme://authority` exactly as the URLs it serves spell it.
    let prefix: String
    let route: ConnectionRoute
    let pools: OriginPools
  }

  /// The destinations of the last few origins, looked up by the start of a URL's string:
  /// working out a route (the URL's parts, the proxy rules, the `Host` header) costs more than
  /// a request's own bytes, and a client talks to the same few origins again and again.
  private let destinations = Lock<[Destination]>([])
  private static let remembered = 16

  private func destination(for url: URL) throws(HTTPError) -> Destination {
    let text = url.absoluteString
    guard let start = HTTP1RequestSerializer.pathStart(in: text) else {
      return try makeDestination(for: url, prefix: nil)
    }
    let prefix = text.utf8[..<start]
    let known = destinations.withLock { list in
      list.first { $0.prefix.utf8.elementsEqual(prefix) }
    }
    if let known { return known }
    return try makeDestination(for: url, prefix: String(Substring(prefix)))
  }

  private func makeDestination(for url: URL, prefix: String?) throws(HTTPError) -> Destination {
    let secure = url.scheme?.lowercased() == "https"
    let route = ConnectionRoute.to(
      url, proxy: try proxy.proxy(for: url), tls: secure ? try context(for: url) : nil)
    let made = Destination(prefix: prefix ?? "", route: route, pools: pools(for: route))
    if let prefix {
      destinations.withLock { list in
        guard !list.contains(where: { $0.prefix == prefix }) else { return }
        if list.count == Self.remembered { list.removeFirst() }
        list.append(made)
      }
    }
    return made
  }

  /// Fails what waits and closes idle connections; the engine takes nothing new afterwards.
  func shutDown() {
    let all = pools.withLock { pools -> [OriginPools] in
      defer { pools = [:] }
      return Array(pools.values)
    }
    destinations.withLock { $0 = [] }
    for origin in all { origin.shutDown() }
  }

  private func pools(for route: ConnectionRoute) -> OriginPools {
    pools.withLock { pools in
      if let made = pools[route.key] { return made }
      // Each origin's first lane is the next loop in turn, so that origins used one request
      // at a time do not all land on the same thread.
      let made = OriginPools(
        loops: group.loopsInTurn(), route: route,
        maximumConnections: maximumConnectionsPerOrigin,
        connectTimeout: connectTimeout, idleTimeout: idleTimeout)
      pools[route.key] = made
      return made
    }
  }

  // MARK: - Transport

  func perform(
    _ request: HTTPRequest, limit: Int, timeout: Double
  ) async throws(HTTPError) -> RawHTTPResponse {
    try await prepareTLSContext(for: request.url)
    let destination = try destination(for: request.url)
    let lane = destination.pools.lane()
    let pool = lane.pool
    lane.inFlight.add(1, ordering: .relaxed)
    defer { lane.inFlight.subtract(1, ordering: .relaxed) }
    let deadline = Monotonic.deadline(after: timeout)
    let id = BufferedExchange.nextID()
    return try await waitForTransfer { continuation in
      // The destination's route, not the pool's: the same pool serves every spelling of an
      // origin, and each request names its host as its URL does.
      let exchange = BufferedExchange(
        id: id, request: request, route: destination.route, limit: limit,
        deadline: deadline, timeout: timeout, continuation: continuation)
      pool.enqueue(exchange)
      // A cancellation that came before the exchange was queued abandoned nothing.
      if Task.isCancelled { pool.abandon(id, .cancelled) }
    } onCancel: {
      pool.abandon(id, .cancelled)
    }
  }

  func stream(
    _ request: HTTPRequest, headTimeout: Double, idleTimeout: Double, highWater: Int
  ) async throws(HTTPError) -> StreamedResponse {
    try await prepareTLSContext(for: request.url)
    let exchange = StreamExchange(
      loop: group.nextLoop(), request: request, route: try route(for: request.url),
      headTimeout: headTimeout, idleTimeout: idleTimeout)
    let (head, body) = try await exchange.start(highWater: highWater)
    return StreamedResponse(status: head.status, headers: head.headers, body: body)
  }
}
