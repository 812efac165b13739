import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A config source that reads a JSON object of entries over HTTP(S).
///
/// ```swift
/// let source = HTTPConfigSource(url: URL(string: "https://config.example.com/app.json")!)
/// let config = RemoteConfig(source: source, cacheURL: cacheURL)
/// config.startPolling(every: .seconds(30))
/// ```
///
/// - Requests are conditional: `If-None-Match` with the last `ETag` and `If-Modified-Since`
///   with the last `Last-Modified`. A 304 costs no decoding.
/// - The body is read chunk by chunk and the transfer stops once it passes
///   ``maximumResponseSize``.
/// - 429 and 5xx fail with ``RemoteConfigError/throttled(status:retryAfter:)`` and
///   ``RemoteConfigError/serverError(status:retryAfter:)`` carrying `Retry-After` (seconds or
///   an HTTP date); 401 and 403 with ``RemoteConfigError/unauthorized(status:)``.
/// - An optional `X-Config-Version` integer header orders documents, so that an older one
///   (from a lagging replica or cache) is never applied; otherwise `Last-Modified` does.
public final class HTTPConfigSource: RemoteConfigSource {
  /// The document's URL.
  public let url: URL
  /// Extra request headers, such as `Authorization`.
  public let headers: [String: String]
  /// The largest body accepted, in bytes. Default 4 MiB.
  public let maximumResponseSize: Int

  private let session: URLSession
  private let transfer = HTTPTransfer()

  /// Creates a source for the document at `url`.
  public init(url: URL, headers: [String: String] = [:], maximumResponseSize: Int = 4 << 20) {
    self.url = url
    self.headers = headers
    self.maximumResponseSize = maximumResponseSize
    let configuration = URLSessionConfiguration.ephemeral
    // Conditional requests are ours to make; a URL cache would answer them itself.
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpCookieStorage = nil
    session = URLSession(configuration: configuration, delegate: transfer, delegateQueue: nil)
  }

  deinit { session.invalidateAndCancel() }

  /// Fetches the document, conditionally when `request.previousVersion` has an `ETag` or a
  /// `Last-Modified`.
  public func fetch(_ request: ConfigFetchRequest) async throws -> ConfigFetchResult {
    var urlRequest = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
    urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
    if let etag = request.previousVersion?.etag {
      urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match")
    }
    if let lastModified = request.previousVersion?.lastModified {
      urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
    }
    let response = try await transfer.perform(
      urlRequest, on: session, limit: maximumResponseSize, timeout: request.timeout)
    let retryAfter = response.headers["retry-after"].flatMap(Self.seconds(retryAfter:))
    switch response.status {
    case 304:
      return .notModified
    case 200..<300:
      let entries = try ConfigDocument.entries(from: response.body)
      let lastModified = response.headers["last-modified"]
      let version = ConfigVersion(
        etag: response.headers["etag"], lastModified: lastModified,
        updatedAt: lastModified.flatMap(Self.httpDate),
        number: response.headers["x-config-version"].flatMap { Int($0) })
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

  static func seconds(retryAfter text: String) -> TimeInterval? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    if let seconds = Int(trimmed) { return TimeInterval(max(0, seconds)) }
    return httpDate(trimmed).map { max(0, $0.timeIntervalSinceNow) }
  }

  static func httpDate(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: text)
  }
}
