import Foundation

/// Why an HTTP request failed: the one error type of ``HTTPClient``, the `.http` shared keys and
/// the transport every Tether module uses.
///
/// Each case names the request's URL without credentials: the user info and the query are
/// removed (a query often carries an API key), and header values never appear. It reads well
/// both in `"\(error)"` and in `localizedDescription`:
///
/// ```swift
/// do {
///   let repos = try await api.send(GitHub.repos, UserRepos(user: "apple"))
/// } catch .status(let code, _, let excerpt, _) where code == 404 {
///   print("no such user: \(excerpt)")
/// } catch {
///   print(error)  // "GET http://…/users/apple/repos: the server answered HTTP 503 …"
/// }
/// ```
public enum HTTPError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
  /// The server could not be reached (connection refused, host not found, TLS failure).
  /// `reason` reads as its words; its ``FailureReason/tlsRefusal`` says when TLS refused the
  /// connection (a certificate refused either way), which is never retried.
  case unreachable(url: String, reason: FailureReason)
  /// No complete response arrived within the timeout, in seconds.
  case timedOut(url: String, after: Double)
  /// The server answered with a status the endpoint does not accept. `bodyExcerpt` holds at
  /// most the first 512 characters of the body; `retryAfter` is the server's `Retry-After`
  /// in seconds (range-checked: never negative, at most one day).
  case status(Int, url: String, bodyExcerpt: String, retryAfter: Double?)
  /// The body passed the size limit, in bytes; receiving stopped there.
  case tooLarge(url: String, limit: Int)
  /// The connection ended before the whole body arrived.
  case truncated(url: String, expected: Int?, received: Int)
  /// The body could not be decoded as the endpoint's response; `path` is the coding path
  /// (such as `items[2].name`) where decoding stopped.
  case undecodable(url: String, path: String, reason: String)
  /// A redirect was not followed: too many, from `https` to `http`, or to another scheme.
  case redirectRefused(url: String, reason: String)
  /// The endpoint cannot be used with these parameters: a path placeholder has no parameter
  /// of that name, a parameter cannot be written in a URL, the body cannot be encoded, or a
  /// header's value holds a line break (which could smuggle a second request).
  case invalidRequest(String)
  /// A conditional save (`If-Match`) found that someone else changed the resource first
  /// (HTTP 412). The `.http` keys load the newer value after this.
  case conflict(url: String)
  /// An interceptor failed with its own error, described here.
  case interceptorFailed(String)
  /// The request was cancelled.
  case cancelled

  /// An ``unreachable(url:reason:)-enum.case`` whose reason is only words, with no TLS refusal
  /// behind it: the spelling from before reasons were typed, kept for source compatibility.
  public static func unreachable(url: String, reason: String) -> HTTPError {
    .unreachable(url: url, reason: FailureReason(reason))
  }

  /// The TLS refusal this error is about (the server's certificate refused, the client's
  /// refused by the server, the client's TLS configuration unusable), or `nil`. Such a failure
  /// repeats on every attempt, so neither the retry policy nor etcd's fail-over repeats it.
  public var tlsRefusal: TLSRefusal? {
    if case .unreachable(_, let reason) = self { return reason.tlsRefusal }
    return nil
  }

  /// The status code when the server answered with one this error is about.
  public var statusCode: Int? {
    switch self {
    case .status(let code, _, _, _): code
    case .conflict: 412
    default: nil
    }
  }

  /// How long the server asked the client to wait, in seconds, if it did.
  public var retryAfter: Double? {
    if case .status(_, _, _, let retryAfter) = self { return retryAfter }
    return nil
  }

  /// A sentence saying what went wrong and where.
  public var description: String {
    switch self {
    case .unreachable(let url, let reason): "\(url): could not reach the server (\(reason))"
    case .timedOut(let url, let seconds):
      "\(url): no complete response within \(Self.format(seconds)) s"
    case .status(let code, let url, let excerpt, let retryAfter):
      "\(url): the server answered HTTP \(code)"
        + (retryAfter.map { "; retry after \(Self.format($0)) s" } ?? "")
        + (excerpt.isEmpty ? "" : ": \(excerpt)")
    case .tooLarge(let url, let limit):
      "\(url): the response is larger than the \(limit)-byte limit"
    case .truncated(let url, nil, 0):
      "\(url): the connection closed before a complete answer arrived"
    case .truncated(let url, let expected, let received):
      "\(url): the response ended after \(received) of \(expected.map(String.init) ?? "?") bytes"
    case .undecodable(let url, let path, let reason):
      "\(url): cannot decode the response at \(path.isEmpty ? "the top level" : path): \(reason)"
    case .redirectRefused(let url, let reason): "\(url): redirect refused: \(reason)"
    case .invalidRequest(let reason): "invalid request: \(reason)"
    case .conflict(let url):
      "\(url): someone else changed the resource first (HTTP 412); the newer value was loaded"
    case .interceptorFailed(let reason): "an interceptor failed: \(reason)"
    case .cancelled: "the request was cancelled"
    }
  }

  /// The same sentence as ``description``.
  public var errorDescription: String? { description }

  /// `url` as errors show it: no user info, no query, no fragment.
  package static func redacted(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return "(invalid URL)"
    }
    components.user = nil
    components.password = nil
    components.query = nil
    components.fragment = nil
    return components.string ?? "(invalid URL)"
  }

  /// At most `limit` characters of `body` as text, for ``status(_:url:bodyExcerpt:retryAfter:)``.
  static func excerpt(of body: Data, limit: Int = 512) -> String {
    let text = String(decoding: body.prefix(limit * 4), as: UTF8.self)
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return trimmed.count > limit ? String(trimmed.prefix(limit)) + "…" : trimmed
  }

  private static func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15
      ? String(Int(seconds)) : String(format: "%.3g", seconds)
  }
}
