import Foundation
import Streams
import TetherHTTP

/// A config source that reads a JSON object of entries over HTTP(S).
///
/// ```swift
/// let source = HTTPConfigSource(url: URL(string: "https://config.example.com/app.json")!)
/// let config = RemoteConfig(source: source, cacheURL: cacheURL)
/// config.startPolling(every: .seconds(30))
/// ```
///
/// It runs on TetherHTTP's one transport, so its hardening rules hold here too: credentials
/// never follow a redirect to another origin — `Authorization`, `Cookie`,
/// `Proxy-Authorization`, and every header given in `headers` (an `X-API-Key` is as secret
/// as an `Authorization`) — `https` never redirects to `http`, and the size limit bounds
/// memory.
///
/// - Requests are conditional: `If-None-Match` with the last `ETag` and `If-Modified-Since`
///   with the last `Last-Modified`. A 304 costs no decoding.
/// - The body is read chunk by chunk and the transfer stops once it passes
///   ``maximumResponseSize``.
/// - 429 and 5xx fail with ``RemoteConfigError/throttled(status:retryAfter:)`` and
///   ``RemoteConfigError/serverError(status:retryAfter:)`` carrying `Retry-After` (seconds or
///   an HTTP date, range-checked: at most one day; polling never waits longer than
///   ``RemoteConfigSettings/maximumBackoff``); 401 and 403 with
///   ``RemoteConfigError/unauthorized(status:)``.
/// - An optional `X-Config-Version` integer header orders documents, so that an older one
///   (from a lagging replica or cache) is never applied; otherwise `Last-Modified` does.
/// - With `eventsURL`, a `text/event-stream` at that URL pushes changes: each event makes the
///   ``RemoteConfig`` fetch (conditionally) and activate at once, without waiting for the
///   next poll. The stream reconnects with back-off when it ends or fails, and catches up
///   with a fetch after each reconnection.
public final class HTTPConfigSource: RemoteConfigSource {
  /// The document's URL.
  public let url: URL
  /// Extra request headers, such as `Authorization`.
  public let headers: [String: String]
  /// The largest body accepted, in bytes. Default 4 MiB.
  public let maximumResponseSize: Int
  /// A server-sent events stream announcing document changes, if the server has one.
  public let eventsURL: URL?

  let client: HTTPClient

  /// Creates a source for the document at `url`.
  ///
  /// - Parameters:
  ///   - url: The document's URL.
  ///   - headers: Extra request headers, such as `Authorization`.
  ///   - maximumResponseSize: The largest body accepted, in bytes.
  ///   - eventsURL: A `text/event-stream` whose events announce that the document changed
  ///     (their data is ignored); `nil` to rely on polling alone.
  public init(
    url: URL, headers: [String: String] = [:], maximumResponseSize: Int = 4 << 20,
    eventsURL: URL? = nil
  ) {
    self.url = url
    self.headers = headers
    self.maximumResponseSize = maximumResponseSize
    self.eventsURL = eventsURL
    // Polling and RemoteConfig's back-off do the retrying.
    // The caller's headers are this origin's: none of them may follow a redirect elsewhere.
    client = HTTPClient(
      baseURL: url, headers: headers, sensitiveHeaders: Set(headers.keys),
      maximumResponseSize: maximumResponseSize, retryPolicy: .none)
  }

  /// Fetches the document, conditionally when `request.previousVersion` has an `ETag` or a
  /// `Last-Modified`.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    var httpRequest = HTTPRequest(
      url: url, headers: headers, timeout: .milliseconds(Int64(request.timeout * 1000)))
    httpRequest.setHeader("Accept", "application/json")
    if let etag = request.previousVersion?.etag {
      httpRequest.setHeader("If-None-Match", etag)
    }
    if let lastModified = request.previousVersion?.lastModified {
      httpRequest.setHeader("If-Modified-Since", lastModified)
    }
    let response: HTTPResponseMessage
    do {
      response = try await client.response(for: httpRequest)
    } catch {
      throw RemoteConfigError(http: error, timeout: request.timeout)
    }
    return try Self.result(of: response)
  }

  /// Listens to ``eventsURL`` (when set) and calls `onChange` for each event and after each
  /// reconnection.
  public func observeChanges(_ onChange: @escaping @Sendable () -> Void) -> AnyCancellable? {
    guard let eventsURL else { return nil }
    let client = client
    let headers = headers
    let task = Task {
      var failures = 0
      var lastEventID: String?
      var connected = false
      while !Task.isCancelled {
        var request = HTTPRequest(url: eventsURL, headers: headers)
        if let lastEventID { request.setHeader("Last-Event-ID", lastEventID) }
        do {
          // A reconnection may have missed events: fetch once to catch up.
          if connected { onChange() }
          var delivered = false
          for try await event in client.serverSentEvents(for: request) {
            connected = true
            delivered = true
            lastEventID = event.id ?? lastEventID
            onChange()
          }
          // A stream that ends without an event is no better than a failure.
          failures = delivered ? 0 : failures + 1
        } catch {
          failures += 1
        }
        do {
          try await Task.sleep(
            for: Self.reconnection.delay(afterFailures: failures) ?? .seconds(30))
        } catch {
          return
        }
      }
    }
    return AnyCancellable { task.cancel() }
  }

  /// The wait before the events stream reconnects: at least one second, doubling per failure
  /// up to 30 s, with full jitter.
  static let reconnection = Backoff(
    initial: .seconds(2), maximum: .seconds(30), minimum: .seconds(1))

  /// What a response means for a config fetch.
  static func result(of response: HTTPResponseMessage) throws -> ConfigFetchResult {
    let retryAfter = response.retryAfter
    switch response.status {
    case 304:
      return .notModified
    case 200..<300:
      let entries = try ConfigDocument.entries(from: response.body)
      let version = ConfigVersion(
        etag: response.etag, lastModified: response.lastModified,
        updatedAt: response.lastModifiedDate,
        number: response.header("x-config-version").flatMap { Int($0) })
      return .modified(ConfigPayload(entries: entries, version: version))
    case 401, 403:
      throw RemoteConfigError.unauthorized(status: response.status)
    case 429:
      throw RemoteConfigError.throttled(status: 429, retryAfter: retryAfter)
    case 500..<600:
      throw RemoteConfigError.serverError(status: response.status, retryAfter: retryAfter)
    default:
      throw RemoteConfigError.unexpectedStatus(response.status)
    }
  }
}

extension RemoteConfigError {
  /// The config error for a transport failure.
  init(http error: HTTPError, timeout: TimeInterval) {
    switch error {
    case .timedOut: self = .timedOut(after: timeout)
    case .unreachable(_, let reason): self = .connectionFailed(reason.description)
    case .tooLarge(_, let limit): self = .responseTooLarge(limit: limit)
    case .truncated(_, let expected, let received):
      self = .truncatedBody(expected: expected, received: received)
    case .status(let status, _, _, let retryAfter):
      switch status {
      case 401, 403: self = .unauthorized(status: status)
      case 429: self = .throttled(status: status, retryAfter: retryAfter)
      case 500..<600: self = .serverError(status: status, retryAfter: retryAfter)
      default: self = .unexpectedStatus(status)
      }
    case .cancelled: self = .connectionFailed(error.description)
    default:
      // An answer that arrived but cannot be used (a coding it cannot read, a redirect it may
      // not follow, a request it refused to send) is the source's failure, not a connection's.
      self = .source(error)
    }
  }
}
