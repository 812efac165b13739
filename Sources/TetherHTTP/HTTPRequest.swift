import Foundation

/// An HTTP method, such as `GET`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The method's name as sent on the wire.
  public let rawValue: String

  /// Creates a method from its name (upper-cased as given).
  public init(rawValue: String) { self.rawValue = rawValue }

  /// `GET`.
  public static let get = HTTPMethod(rawValue: "GET")
  /// `HEAD`.
  public static let head = HTTPMethod(rawValue: "HEAD")
  /// `POST`.
  public static let post = HTTPMethod(rawValue: "POST")
  /// `PUT`.
  public static let put = HTTPMethod(rawValue: "PUT")
  /// `PATCH`.
  public static let patch = HTTPMethod(rawValue: "PATCH")
  /// `DELETE`.
  public static let delete = HTTPMethod(rawValue: "DELETE")

  /// Whether repeating the request has the same effect as sending it once (RFC 9110 9.2.2):
  /// only such requests are retried.
  public var isIdempotent: Bool {
    ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(rawValue)
  }

  /// The method's name.
  public var description: String { rawValue }
}

/// One HTTP request as ``HTTPClient`` sends it and as interceptors see it.
///
/// ```swift
/// let request = HTTPRequest(method: .get, url: URL(string: "https://example.com/health")!)
/// let response = try await client.response(for: request)
/// ```
public struct HTTPRequest: Sendable, Hashable {
  /// The method.
  public var method: HTTPMethod
  /// The full URL, query included.
  public var url: URL
  /// Header fields by name. Names are matched case-insensitively when sent.
  public var headers: [String: String]
  /// The body, if any.
  public var body: Data?
  /// How long this request may take; `nil` uses the client's ``HTTPClient/timeout``.
  public var timeout: Duration?

  /// Creates a request.
  public init(
    method: HTTPMethod = .get, url: URL, headers: [String: String] = [:], body: Data? = nil,
    timeout: Duration? = nil
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
  }

  /// The value of the header `name`, compared case-insensitively.
  public func header(_ name: String) -> String? {
    headers.first { HeaderParsing.sameName($0.key, name) }?.value
  }

  /// Headers that are never sent to another origin, whatever the caller marks
  /// (lower-cased).
  static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

  /// Sets (or, with `nil`, removes) the header `name`, replacing any spelling of it.
  public mutating func setHeader(_ name: String, _ value: String?) {
    for key in headers.keys where HeaderParsing.sameName(key, name) {
      headers.removeValue(forKey: key)
    }
    if let value { headers[name] = value }
  }
}

extension HTTPRequest: CustomStringConvertible, CustomDebugStringConvertible {
  /// The method, the URL without user info or query, and the header names, with the values
  /// of credentials (`Authorization`, `Cookie`, `Proxy-Authorization`, `X-API-Key`) hidden,
  /// so that printing or logging a request never shows a secret.
  public var description: String {
    let credentials = HTTPRequest.credentialHeaders.union(["x-api-key"])
    let fields = headers.keys.sorted().map { name in
      credentials.contains(name.lowercased()) ? "\(name): <redacted>" : "\(name): \(headers[name]!)"
    }
    return "\(method) \(HTTPError.redacted(url))"
      + (fields.isEmpty ? "" : " [\(fields.joined(separator: ", "))]")
      + (body.map { " (\($0.count)-byte body)" } ?? "")
  }

  /// The same as ``description``.
  public var debugDescription: String { description }
}

/// A response as ``HTTPClient/response(for:)`` returns it: any status, the headers and the
/// whole body (within the client's size limit).
public struct HTTPResponseMessage: Sendable, Hashable {
  /// The status code.
  public var status: Int
  /// Header fields with lower-cased names.
  public var headers: [String: String]
  /// The body.
  public var body: Data

  /// Creates a response.
  public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = Dictionary(
      headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    self.body = body
  }

  /// The value of the header `name` (case-insensitive).
  public func header(_ name: String) -> String? { headers[name.lowercased()] }

  /// The `ETag`, when it is a well-formed entity tag.
  public var etag: String? { header("etag").flatMap(HeaderParsing.entityTag) }

  /// The `Last-Modified` header as sent, when it is a valid HTTP date.
  public var lastModified: String? { header("last-modified").flatMap(HeaderParsing.lastModified) }

  /// The `Last-Modified` date, when valid.
  public var lastModifiedDate: Date? { lastModified.flatMap(HeaderParsing.httpDate) }

  /// The `Retry-After` header in seconds from now (delay-seconds or an HTTP date), clamped to
  /// at most one day; `nil` when absent or malformed.
  public var retryAfter: Double? { header("retry-after").flatMap { HeaderParsing.retryAfter($0) } }

  /// `Cache-Control: max-age` in seconds (clamped), when present.
  public var maxAge: Int? {
    header("cache-control").flatMap { HeaderParsing.maxAge(cacheControl: $0) }
  }
}

/// A response whose body is still arriving (see ``HTTPClient/streamingResponse(for:)``).
public struct HTTPStreamingResponse: Sendable {
  /// The status code.
  public let status: Int
  /// Header fields with lower-cased names.
  public let headers: [String: String]
  /// The body's chunks as they arrive; ends with the body, throws ``HTTPError`` on failure.
  public let body: AsyncThrowingStream<Data, any Error>
}
