import Foundation

/// A scripted misbehaviour that `TestHTTPServer` applies to a request instead of (or before)
/// serving the document.
///
/// Queue a fault for the next requests with `TestHTTPServer.inject(_:at:count:)`, or keep it
/// until cleared with `TestHTTPServer.injectPersistently(_:at:)`:
///
/// ```swift
/// server.inject(.status(503, retryAfter: .seconds(2)))          // the next request only
/// server.inject(.connectionReset, count: 3)                     // the next three
/// server.inject(.serveDocument.delayed(by: .milliseconds(300))) // slow, then normal
/// server.injectPersistently(.status(500))                       // until clearFaults()
/// ```
public struct HTTPFault: Sendable {
  enum Kind: Sendable {
    case serveDocument
    case response(HTTPResponse)
    case truncatedBody(sentByteCount: Int, body: Data?)
    case oversizedBody(byteCount: Int, chunked: Bool)
    case stream(HTTPStream)
    case connectionReset
    case closeWithoutResponse
    case raw(Data)
    case gzipBomb(decompressedByteCount: Int)
    case endlessBody(contentEncoding: String?)
  }

  let kind: Kind
  /// How long the server waits after reading the request before it sends anything.
  public private(set) var delay: Duration?

  init(_ kind: Kind, delay: Duration? = nil) {
    self.kind = kind
    self.delay = delay
  }

  /// The same fault, sent only after waiting `delay` (the status line and headers included).
  ///
  /// The wait blocks only this connection; other connections and `stop()` are unaffected.
  public func delayed(by delay: Duration) -> HTTPFault {
    HTTPFault(kind, delay: delay)
  }

  /// No misbehaviour: serve the document normally (useful with `delayed(by:)`).
  public static var serveDocument: HTTPFault { HTTPFault(.serveDocument) }

  /// Serve the document normally after waiting `duration` before the headers.
  public static func delay(_ duration: Duration) -> HTTPFault {
    HTTPFault(.serveDocument, delay: duration)
  }

  /// Answer with `status`, the given extra headers and body (empty by default).
  public static func status(
    _ status: Int, body: Data = Data(), headers: [String: String] = [:]
  ) -> HTTPFault {
    HTTPFault(.response(HTTPResponse(status: status, headers: headers, body: body)))
  }

  /// Answer with `status` and a UTF-8 text body.
  public static func status(
    _ status: Int, body: String, headers: [String: String] = [:]
  ) -> HTTPFault {
    .status(status, body: Data(body.utf8), headers: headers)
  }

  /// Answer with `status` (typically 429 or 503) and a `Retry-After` header.
  public static func status(
    _ status: Int, retryAfter: RetryAfter, body: Data = Data(), headers: [String: String] = [:]
  ) -> HTTPFault {
    var headers = headers
    headers["Retry-After"] = retryAfter.headerValue
    return .status(status, body: body, headers: headers)
  }

  /// Answer 200 with a body that is not valid JSON (by default an object cut short).
  public static func malformedBody(
    _ body: String = #"{"welcome_title": "Hel"#, contentType: String = "application/json"
  ) -> HTTPFault {
    .status(200, body: body, headers: ["Content-Type": contentType])
  }

  /// Send headers announcing the whole body in `Content-Length`, then only its first
  /// `sentByteCount` bytes, then close the connection.
  ///
  /// - Parameter body: The body to cut; `nil` uses the document at the request's path (or
  ///   1 KiB of filler when there is none).
  public static func truncatedBody(sending sentByteCount: Int, of body: Data? = nil) -> HTTPFault {
    HTTPFault(.truncatedBody(sentByteCount: max(0, sentByteCount), body: body))
  }

  /// Answer 200 with a valid JSON body of exactly `byteCount` bytes (at least 16), for
  /// response-size limits. With `chunked: true` no `Content-Length` is sent, so a client must
  /// count while reading.
  public static func oversizedBody(byteCount: Int, chunked: Bool = false) -> HTTPFault {
    HTTPFault(.oversizedBody(byteCount: max(16, byteCount), chunked: chunked))
  }

  /// Answer with a chunked body that stays open: the test pushes chunks through `stream` and
  /// ends it when it wants (see `HTTPStream`).
  public static func stream(_ stream: HTTPStream) -> HTTPFault {
    HTTPFault(.stream(stream))
  }

  /// Answer 200 with `Content-Encoding: gzip` and a small gzip body that inflates to
  /// `decompressedByteCount` zero bytes (about 160:1; 256 MiB take 1.7 MB on the wire), sent
  /// with `Content-Length`. A client must bound what it inflates, not what it receives.
  public static func gzipBomb(decompressedByteCount: Int) -> HTTPFault {
    HTTPFault(.gzipBomb(decompressedByteCount: max(258, decompressedByteCount)))
  }

  /// Answer 200 with a chunked body that never ends: 64 KiB chunks as fast as the client
  /// reads them, until it disconnects or the server stops.
  public static var endlessBody: HTTPFault { HTTPFault(.endlessBody(contentEncoding: nil)) }

  /// Reset the connection (TCP RST) instead of answering.
  public static var connectionReset: HTTPFault { HTTPFault(.connectionReset) }

  /// Close the connection cleanly (TCP FIN) without sending a response.
  public static var closeWithoutResponse: HTTPFault { HTTPFault(.closeWithoutResponse) }

  /// Send `bytes` exactly as given, then close: for malformed status lines or headers.
  public static func rawResponse(_ bytes: Data) -> HTTPFault {
    HTTPFault(.raw(bytes))
  }

  /// Send the UTF-8 text `text` exactly as given, then close.
  public static func rawResponse(_ text: String) -> HTTPFault {
    .rawResponse(Data(text.utf8))
  }

  /// The value of a `Retry-After` header.
  public enum RetryAfter: Sendable, Equatable {
    /// A number of seconds, such as `Retry-After: 2`.
    case seconds(Int)
    /// An HTTP date, such as `Retry-After: Sun, 06 Nov 1994 08:49:37 GMT`.
    case date(Date)
    /// Any text, including invalid values a client must survive.
    case raw(String)

    /// The header value as sent.
    public var headerValue: String {
      switch self {
      case .seconds(let seconds): String(seconds)
      case .date(let date): HTTPDate.string(from: date)
      case .raw(let text): text
      }
    }
  }
}
