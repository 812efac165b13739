import Foundation
import Synchronization
import TetherHTTP

/// An in-process stand-in for an HTTP server: canned answers by method and path, every request
/// recorded, and latency, failures, statuses and server-sent events on demand.
///
/// A test creates a client on it and hands that client to the code under test, so the choice
/// is made by the client, never by global state; nothing reaches a network:
///
/// ```swift
/// let server = HTTPStubTransport()
/// server.on(.get, "/todos", .json([Todo(id: 1, title: "Buy milk")]))
/// server.on(.post, "/todos", .status(201))
/// let api = HTTPClient(baseURL: URL(string: "https://api.example.com")!, transport: server)
///
/// let todos = try await api.send(TodoAPI.list)
/// #expect(server.requests.map(\.url.path) == ["/todos"])
/// ```
///
/// Everything the client does around the transport still runs over the stub: interceptors,
/// retries (a `503` answered once is retried), the request checks, redirects, the timeout (a
/// stub slower than the client's `timeout` fails with `HTTPError.timedOut`) and the response
/// size limit. A request no stub matches is answered `404` with a body that names it.
///
/// Paths match segment by segment on the path as sent, percent-encoded (`"/todos/1"`): a
/// parameter holding `/` is sent as `%2F` and stays one segment, so `"/users/*/repos"` matches
/// `/users/a%2Fb/repos`. A route may spell a segment encoded or not (`"a%20b"` or `"a b"`),
/// but a `/` inside a segment only as `%2F`. `"*"` in a segment matches any one segment
/// (`"/todos/*"`). The stub registered last for a method and path wins. It is safe to use from
/// any thread, and to change the stubs while requests run.
public final class HTTPStubTransport: Sendable {
  /// One canned answer: a status with headers and a body, a failure, or a stream of events,
  /// optionally after a delay.
  public struct Response: Sendable {
    enum Kind: Sendable {
      case message(HTTPResponseMessage)
      case failure(HTTPError)
      case events(status: Int, AsyncStream<ServerSentEvent>)
    }
    var kind: Kind
    var latency: Duration = .zero

    /// An answer with `status`, `headers` and `body`.
    public static func status(
      _ status: Int, headers: [String: String] = [:], body: Data = Data()
    ) -> Self {
      Self(kind: .message(HTTPResponseMessage(status: status, headers: headers, body: body)))
    }

    /// A `200` (or `status`) answer whose body is `value` as JSON.
    ///
    /// The value is encoded when the stub is made; an encoding failure is a `500` answer whose
    /// body says why, so the test sees it rather than a silent empty body.
    public static func json<Value: Encodable>(
      _ value: Value, status: Int = 200, headers: [String: String] = [:],
      encoder: JSONEncoder = JSONEncoder()
    ) -> Self {
      var headers = headers
      if headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
        headers["Content-Type"] = "application/json"
      }
      do {
        return .status(status, headers: headers, body: try encoder.encode(value))
      } catch {
        return .status(500, body: Data("the stub's value did not encode: \(error)".utf8))
      }
    }

    /// A `200` (or `status`) answer whose body is `text` in UTF-8.
    public static func text(
      _ text: String, status: Int = 200, headers: [String: String] = [:]
    ) -> Self {
      .status(status, headers: headers, body: Data(text.utf8))
    }

    /// No answer: the request fails with `error` (such as
    /// `.unreachable(url:reason:)`), as it would when the network fails.
    public static func failure(_ error: HTTPError) -> Self { Self(kind: .failure(error)) }

    /// A `text/event-stream` answer that sends `events`, then ends the stream.
    public static func events(_ events: [ServerSentEvent], status: Int = 200) -> Self {
      .events(
        AsyncStream { continuation in
          for event in events { continuation.yield(event) }
          continuation.finish()
        }, status: status)
    }

    /// A `text/event-stream` answer that sends each event `events` yields, as it yields it,
    /// and ends when `events` ends: a test pushes live events through its continuation.
    ///
    /// ```swift
    /// let (events, push) = AsyncStream<ServerSentEvent>.makeStream()
    /// server.on(.get, "/prices", .events(events))
    /// push.yield(ServerSentEvent(data: #"{"price": 3}"#))
    /// ```
    public static func events(_ events: AsyncStream<ServerSentEvent>, status: Int = 200) -> Self {
      Self(kind: .events(status: status, events))
    }

    /// The same answer, given only after `latency` has passed (a slow server). The client's
    /// timeout still applies.
    public func delayed(by latency: Duration) -> Self {
      var copy = self
      copy.latency = latency
      return copy
    }
  }

  private struct Route: Sendable {
    var method: HTTPMethod
    var segments: [String]
    var answer: @Sendable (HTTPRequest) async -> Response

    func matches(_ request: HTTPRequest) -> Bool {
      guard request.method == method else { return false }
      let path = HTTPStubTransport.segments(HTTPStubTransport.encodedPath(of: request.url))
      return path.count == segments.count
        && zip(path, segments).allSatisfy { $1 == "*" || $0 == $1 }
    }
  }

  private struct State: Sendable {
    var routes: [Route] = []
    var requests: [HTTPRequest] = []
  }
  private let state = Mutex(State())

  /// Creates a stub with no routes: every request is answered `404` until one is added.
  public init() {}

  /// Answers every `method` request for `path` with `response`.
  public func on(_ method: HTTPMethod, _ path: String, _ response: Response) {
    on(method, path) { _ in response }
  }

  /// Answers `method` requests for `path` with `responses` in turn; the last one is repeated
  /// for every request after it (for example a `503`, then a `200`, to see a retry).
  public func on(_ method: HTTPMethod, _ path: String, sequence responses: [Response]) {
    let next = Mutex(0)
    on(method, path) { _ in
      let index = next.withLock { index in
        defer { index += 1 }
        return index
      }
      return responses.isEmpty ? .status(404) : responses[min(index, responses.count - 1)]
    }
  }

  /// Answers `method` requests for `path` with whatever `answer` returns for each request,
  /// for answers that depend on the request (its body, its headers, a counter).
  public func on(
    _ method: HTTPMethod, _ path: String,
    answer: @escaping @Sendable (HTTPRequest) async -> Response
  ) {
    let route = Route(method: method, segments: Self.segments(path), answer: answer)
    state.withLock { $0.routes.append(route) }
  }

  /// Every request that reached the stub, oldest first, as sent: after the client's default
  /// headers and its interceptors, with the headers the socket transport adds to every request
  /// (`User-Agent: Tether`, `Accept-Encoding: identity`, unless the request set its own) and
  /// without the framing headers it never sends as given (`Host`, `Content-Length`,
  /// `Transfer-Encoding`, `Connection`); each retry and redirect a request of its own.
  public var requests: [HTTPRequest] { state.withLock { $0.requests } }

  /// The requests for `method` and `path` (matched as routes are), oldest first.
  public func requests(_ method: HTTPMethod, _ path: String) -> [HTTPRequest] {
    let route = Route(method: method, segments: Self.segments(path), answer: { _ in .status(404) })
    return requests.filter(route.matches)
  }

  /// Forgets the recorded requests (the routes stay).
  public func clearRequests() { state.withLock { $0.requests = [] } }

  // MARK: - Answering

  /// The path's segments, split on the `/`s of its encoded form and then each decoded: a
  /// `%2F` stays inside its segment, and a route may spell a segment either way (`a%20b` or
  /// `a b`).
  private static func segments(_ path: String) -> [String] {
    path.split(separator: "/", omittingEmptySubsequences: true).map {
      $0.removingPercentEncoding ?? String($0)
    }
  }

  /// The path as sent on the wire: percent-encoded, `/` when empty.
  private static func encodedPath(of url: URL) -> String {
    let path =
      URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
    return path.isEmpty ? "/" : path
  }

  /// Records `request` and finds its answer, after the answer's latency.
  private func answer(_ request: HTTPRequest) async throws(HTTPError) -> Response {
    let route = state.withLock { state in
      state.requests.append(request)
      return state.routes.last { $0.matches(request) }
    }
    guard let route else {
      return .text(
        "HTTPStubTransport: no stub for \(request.method) \(Self.encodedPath(of: request.url))",
        status: 404)
    }
    let response = await route.answer(request)
    if response.latency > .zero {
      do {
        try await Task.sleep(for: response.latency)
      } catch {
        throw .cancelled
      }
    }
    if case .failure(let error) = response.kind { throw error }
    return response
  }
}

extension HTTPStubTransport: HTTPExchangeHandler {
  package func respond(to request: HTTPRequest) async throws(HTTPError) -> HTTPResponseMessage {
    switch try await answer(request).kind {
    case .message(let message): return message
    case .failure(let error): throw error
    case .events(let status, let events):
      // A buffered request for a stream: the events it has so far, as the server sent them.
      var body = Data()
      for await event in events { body.append(Self.encode(event)) }
      return HTTPResponseMessage(
        status: status, headers: ["Content-Type": "text/event-stream"], body: body)
    }
  }

  package func stream(_ request: HTTPRequest) async throws(HTTPError) -> HTTPStreamingResponse {
    switch try await answer(request).kind {
    case .failure(let error): throw error
    case .message(let message):
      return HTTPStreamingResponse(
        status: message.status, headers: message.headers,
        streaming: AsyncThrowingStream { continuation in
          if !message.body.isEmpty { continuation.yield(message.body) }
          continuation.finish()
        })
    case .events(let status, let events):
      return HTTPStreamingResponse(
        status: status, headers: ["Content-Type": "text/event-stream"],
        streaming: AsyncThrowingStream { continuation in
          let pump = Task {
            for await event in events { continuation.yield(Self.encode(event)) }
            continuation.finish()
          }
          continuation.onTermination = { _ in pump.cancel() }
        })
    }
  }

  /// One event in `text/event-stream` form.
  static func encode(_ event: ServerSentEvent) -> Data {
    var text = ""
    if event.event != "message" { text += "event: \(event.event)\n" }
    if let id = event.id { text += "id: \(id)\n" }
    for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) {
      text += "data: \(line)\n"
    }
    return Data((text + "\n").utf8)
  }
}

extension HTTPClient {
  /// Creates a client whose every request is answered by `transport`, never the network.
  ///
  /// The parameters are those of `HTTPClient(baseURL:…)`, and behave the same over the stub:
  /// retries, interceptors, the timeout and the size limit all apply.
  ///
  /// ```swift
  /// let api = HTTPClient(baseURL: URL(string: "https://api.example.com")!, transport: server)
  /// ```
  public convenience init(
    baseURL: URL, headers: [String: String] = [:], sensitiveHeaders: Set<String> = [],
    timeout: Duration = .seconds(30), maximumResponseSize: Int = 8 << 20,
    maximumRedirects: Int = 5, retryPolicy: HTTPRetryPolicy = .default,
    interceptors: [HTTPInterceptor] = [], streamIdleTimeout: Duration = .seconds(300),
    transport: HTTPStubTransport
  ) {
    self.init(
      baseURL: baseURL, headers: headers, sensitiveHeaders: sensitiveHeaders, timeout: timeout,
      maximumResponseSize: maximumResponseSize, maximumRedirects: maximumRedirects,
      retryPolicy: retryPolicy, interceptors: interceptors,
      streamIdleTimeout: streamIdleTimeout, plainHTTPOverSockets: false)
    exchange(with: transport)
  }
}
