import Foundation

/// A real HTTP/1.1 server on 127.0.0.1 for tests: it serves documents, answers conditional
/// requests, records every request and misbehaves on demand.
///
/// ```swift
/// let server = try TestHTTPServer()
/// let document = server.setDocument(#"{"welcome_title":"Hi"}"#, at: "/config.json")
/// // a client GETs server.url(for: "/config.json") → 200 with ETag document.etag
/// // the same GET with If-None-Match: document.etag → 304
/// server.inject(.status(503, retryAfter: .seconds(1)))   // the next request fails
/// #expect(server.requestCount(at: "/config.json") == 3)
/// ```
///
/// - The port is ephemeral, so tests run in parallel without clashing.
/// - Each connection is served on its own thread; keep-alive and concurrent connections work.
/// - Documents are served to any method (`HEAD` without the body); a path without a document
///   or handler answers 404. `If-None-Match` (weak comparison, `*` allowed) and, when that is
///   absent, `If-Modified-Since` produce 304 for `GET` and `HEAD`.
/// - `stop()`, or releasing the server, closes the listener and every connection, including
///   ones in a delay or an open stream.
///
/// All methods are thread-safe and may be called while requests are in flight.
public final class TestHTTPServer: Sendable {
  private let core: ServerCore

  /// Starts a server listening on an ephemeral port of 127.0.0.1.
  ///
  /// The socket is listening when this returns, so clients can connect at once.
  /// - Throws: `SocketError` when the socket cannot be created or bound.
  public init() throws {
    core = try ServerCore()
    core.startAccepting()
  }

  /// Starts a server; the async spelling of `init()`, for symmetry with async set-up code.
  public static func start() async throws -> TestHTTPServer {
    try TestHTTPServer()
  }

  deinit {
    core.stop()
  }

  /// Stops the server: shuts the listener and every open connection down and ends delays and
  /// open streams; the connection threads end shortly after, without the caller waiting for
  /// them (it may be one of Swift concurrency's few threads). Calling it again does nothing.
  public func stop() {
    core.stop()
  }

  // MARK: - Addresses

  /// The port the server listens on.
  public var port: UInt16 { core.port }

  /// `http://127.0.0.1:<port>`, the root of every served path.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(core.port)")! }

  /// The same as `baseURL`.
  public var url: URL { baseURL }

  /// The URL of `path` on this server, such as `url(for: "/config.json")`.
  ///
  /// `path` may carry a query (`"/v3/watch?x=1"`); a missing leading `/` is added.
  public func url(for path: String) -> URL {
    URL(string: "http://127.0.0.1:\(core.port)\(Self.normalized(path))")!
  }

  // MARK: - Documents

  /// Serves `body` at `path` from now on, replacing any earlier document there.
  ///
  /// - Parameters:
  ///   - etag: The entity tag; `nil` computes one from the body (`HTTPDocument.etag(for:)`),
  ///     so changing the body changes the tag. Quotes are added when missing.
  ///   - lastModified: Sent as `Last-Modified` and compared with `If-Modified-Since`; `nil`
  ///     sends no such header.
  ///   - headers: Extra response headers.
  /// - Returns: The document as it will be served, including its `etag`.
  @discardableResult
  public func setDocument(
    _ body: Data,
    at path: String = "/",
    contentType: String = "application/json",
    etag: String? = nil,
    lastModified: Date? = nil,
    headers: [String: String] = [:]
  ) -> HTTPDocument {
    let document = HTTPDocument(
      body: body, contentType: contentType, etag: etag, lastModified: lastModified,
      headers: headers)
    setDocument(document, at: path)
    return document
  }

  /// Serves the UTF-8 text `body` at `path`; see `setDocument(_:at:contentType:etag:lastModified:headers:)`
  /// for the parameters.
  @discardableResult
  public func setDocument(
    _ body: String,
    at path: String = "/",
    contentType: String = "application/json",
    etag: String? = nil,
    lastModified: Date? = nil,
    headers: [String: String] = [:]
  ) -> HTTPDocument {
    setDocument(
      Data(body.utf8), at: path, contentType: contentType, etag: etag, lastModified: lastModified,
      headers: headers)
  }

  /// Serves `value` encoded as JSON (sorted keys) at `path`.
  @discardableResult
  public func setJSONDocument(
    _ value: some Encodable, at path: String = "/", lastModified: Date? = nil
  ) throws -> HTTPDocument {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return setDocument(try encoder.encode(value), at: path, lastModified: lastModified)
  }

  /// Serves `document` at `path`, replacing any earlier document there.
  public func setDocument(_ document: HTTPDocument, at path: String) {
    let path = Self.normalized(path)
    core.state.withLock { $0.documents[path] = document }
  }

  /// The document served at `path`, if any.
  public func document(at path: String = "/") -> HTTPDocument? {
    let path = Self.normalized(path)
    return core.state.withLock { $0.documents[path] }
  }

  /// Stops serving a document at `path` (it answers 404 afterwards).
  public func removeDocument(at path: String = "/") {
    let path = Self.normalized(path)
    _ = core.state.withLock { $0.documents.removeValue(forKey: path) }
  }

  /// Answers requests for `path` with `handler` instead of a document (faults still apply).
  ///
  /// The handler runs on the connection's thread, never under the server's lock, and may be
  /// called concurrently for different connections. It should not capture the server itself
  /// (that would keep it alive); record what it needs in its own state instead.
  public func setHandler(
    at path: String, _ handler: @escaping @Sendable (RecordedRequest) -> HTTPResponse
  ) {
    let path = Self.normalized(path)
    core.state.withLock { $0.handlers[path] = handler }
  }

  /// Removes the handler for `path`.
  public func removeHandler(at path: String) {
    let path = Self.normalized(path)
    _ = core.state.withLock { $0.handlers.removeValue(forKey: path) }
  }

  // MARK: - Faults

  /// Applies `fault` to the next `count` requests for `path` (any path when `nil`).
  ///
  /// Queued faults are used in the order they were injected, before any persistent fault.
  public func inject(_ fault: HTTPFault, at path: String? = nil, count: Int = 1) {
    guard count > 0 else { return }
    let path = path.map(Self.normalized)
    core.state.withLock {
      $0.queuedFaults.append(ServerCore.QueuedFault(path: path, fault: fault, remaining: count))
    }
  }

  /// Applies `fault` to every request for `path` (any path when `nil`) until `clearFaults()`.
  ///
  /// When several persistent faults match, the most recently injected one wins.
  public func injectPersistently(_ fault: HTTPFault, at path: String? = nil) {
    let path = path.map(Self.normalized)
    core.state.withLock { $0.persistentFaults.append((path, fault)) }
  }

  /// Removes every queued and persistent fault; requests are served normally again.
  public func clearFaults() {
    core.state.withLock {
      $0.queuedFaults.removeAll()
      $0.persistentFaults.removeAll()
    }
  }

  /// How many queued fault applications are still waiting for requests.
  public var pendingFaultCount: Int {
    core.state.withLock { $0.queuedFaults.reduce(0) { $0 + $1.remaining } }
  }

  // MARK: - Recorded requests

  /// Every request received so far (since the last `clearRecordedRequests()`), in arrival
  /// order.
  public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

  /// The requests received for `path` (the query is ignored), in arrival order.
  public func requests(at path: String) -> [RecordedRequest] {
    let path = Self.normalized(path)
    return core.state.withLock { $0.requests.filter { $0.path == path } }
  }

  /// How many requests have been received.
  public var requestCount: Int { core.state.withLock { $0.requests.count } }

  /// How many requests have been received for `path`.
  public func requestCount(at path: String) -> Int {
    let path = Self.normalized(path)
    return core.state.withLock { $0.requests.lazy.filter { $0.path == path }.count }
  }

  /// Forgets the recorded requests (the counts restart at zero).
  public func clearRecordedRequests() {
    core.state.withLock { $0.requests.removeAll() }
  }

  /// Waits until at least `count` requests (for `path`, or any) have been received, and
  /// returns them.
  ///
  /// - Throws: `TimeoutError` naming the requests seen so far.
  @discardableResult
  public func waitForRequests(
    _ count: Int, at path: String? = nil, timeout: Duration = Deadline.defaultTimeout
  ) async throws -> [RecordedRequest] {
    let current = { path.map { self.requests(at: $0) } ?? self.requests }
    do {
      try await waitUntil("\(count) request(s) at \(path ?? "any path")", timeout: timeout) {
        current().count >= count
      }
    } catch let error as TimeoutError {
      let seen = requests.map { "  \($0)" }.joined(separator: "\n")
      throw TimeoutError(
        waitingFor: error.waitingFor, after: timeout,
        context: "requests received:\n\(seen.isEmpty ? "  (none)" : seen)")
    }
    return current()
  }

  /// How many connections the server has accepted.
  public var connectionCount: Int { core.state.withLock { $0.connectionsAccepted } }

  /// How many connections are open now.
  public var openConnectionCount: Int { core.state.withLock { $0.openConnections.count } }

  private static func normalized(_ path: String) -> String {
    path.hasPrefix("/") ? path : "/" + path
  }
}
