import Foundation

/// A request `TestHTTPServer` received, as the test reads it back.
///
/// ```swift
/// let second = server.requests(at: "/config.json")[1]
/// #expect(second.header("If-None-Match") == firstETag)
/// ```
public struct RecordedRequest: Sendable, CustomStringConvertible {
  /// The method, such as `GET`.
  public let method: String
  /// The path without the query, such as `/config.json`.
  public let path: String
  /// The query without the `?`, or `nil` when the target had none.
  public let query: String?
  /// The header fields in the order they arrived, names as sent.
  public let headerFields: [(name: String, value: String)]
  /// The request body (decoded when it was sent chunked).
  public let body: Data
  /// When the server finished reading the request head, on the monotonic clock; compare two
  /// of these to assert back-off timing.
  public let arrival: ContinuousClock.Instant
  /// When the server finished reading the request head, on the wall clock.
  public let date: Date
  /// Which connection carried it: requests with the same number shared a connection.
  public let connectionNumber: Int
  /// The request's position among all requests this server received, starting at 1.
  public let sequenceNumber: Int

  /// The value of the header `name` (case-insensitive); repeated fields are joined with `, `.
  public func header(_ name: String) -> String? {
    HeaderName.value(of: name, in: headerFields)
  }

  /// The body as UTF-8 text.
  public var text: String { String(decoding: body, as: UTF8.self) }

  /// A one-line summary for failure messages, such as `#2 GET /config.json?x=1 (connection 1)`.
  public var description: String {
    let target = query.map { "\(path)?\($0)" } ?? path
    return "#\(sequenceNumber) \(method) \(target) (connection \(connectionNumber))"
  }
}
