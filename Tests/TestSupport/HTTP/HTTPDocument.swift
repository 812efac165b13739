import Foundation

/// A document that `TestHTTPServer` serves at one path, with its validators.
///
/// Create one with `TestHTTPServer.setDocument(_:at:contentType:etag:lastModified:headers:)`,
/// which returns it so a test can read the `etag` it will be served with.
public struct HTTPDocument: Sendable, Equatable {
  /// The response body.
  public var body: Data
  /// The `Content-Type` header value.
  public var contentType: String
  /// The strong entity tag sent as `ETag`, including its quotes (`"3f9a…"`).
  public var etag: String
  /// The `Last-Modified` date, if the document has one.
  public var lastModified: Date?
  /// Extra response headers, such as `Cache-Control`.
  public var headers: [String: String]

  /// Creates a document; a `nil` etag is computed from the body, so different bodies get
  /// different tags and equal bodies the same tag.
  public init(
    body: Data,
    contentType: String = "application/json",
    etag: String? = nil,
    lastModified: Date? = nil,
    headers: [String: String] = [:]
  ) {
    self.body = body
    self.contentType = contentType
    self.etag = etag.map(Self.quoted) ?? Self.etag(for: body)
    self.lastModified = lastModified
    self.headers = headers
  }

  /// The body as UTF-8 text.
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// The entity tag the server computes for `body`: a quoted 64-bit FNV-1a hash in hex.
  public static func etag(for body: Data) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in body {
      hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return "\"\(String(repeating: "0", count: 16 - hex.count))\(hex)-\(body.count)\""
  }

  /// Adds the quotes an entity tag needs, unless it already has them (or is weak, `W/"…"`).
  static func quoted(_ tag: String) -> String {
    if tag.hasPrefix("\"") || tag.hasPrefix("W/\"") { return tag }
    return "\"\(tag)\""
  }

  /// Whether an `If-None-Match` value names this document's tag (weak comparison, as RFC 9110
  /// requires for `If-None-Match`), or is `*`.
  func matches(ifNoneMatch value: String) -> Bool {
    let own = Self.opaque(etag)
    return value.split(separator: ",").contains { candidate in
      let tag = candidate.trimmingCharacters(in: .whitespaces)
      return tag == "*" || Self.opaque(tag) == own
    }
  }

  private static func opaque(_ tag: String) -> String {
    tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
  }
}
