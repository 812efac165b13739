import Foundation

/// A complete response that a custom handler returns (see `TestHTTPServer.setHandler(at:_:)`).
///
/// The server adds `Content-Length` and `Connection`; a handler sets everything else.
public struct HTTPResponse: Sendable, Equatable {
  /// The status code, such as 200 or 503.
  public var status: Int
  /// Response headers (names are sent as given).
  public var headers: [String: String]
  /// The body; empty for none.
  public var body: Data

  /// Creates a response.
  public init(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// Creates a response with a UTF-8 text body.
  public init(status: Int = 200, headers: [String: String] = [:], body: String) {
    self.init(status: status, headers: headers, body: Data(body.utf8))
  }

  /// The standard reason phrase for `status`, such as `Not Modified` for 304.
  public static func reasonPhrase(for status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 204: "No Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 304: "Not Modified"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 412: "Precondition Failed"
    case 413: "Content Too Large"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status \(status)"
    }
  }
}
