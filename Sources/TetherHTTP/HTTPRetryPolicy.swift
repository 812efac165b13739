import TetherSupport

/// When ``HTTPClient`` repeats a failed request.
///
/// Only idempotent requests (`GET`, `HEAD`, `PUT`, `DELETE`) are retried, and only after a
/// failure that another attempt may not repeat: the server unreachable, a timeout, a cut-off
/// body, or HTTP 408, 429, 500, 502, 503 or 504. A TLS refusal (``HTTPError/tlsRefusal``: the
/// server's certificate refused, the client's refused by the server) is not retried: it is
/// refused again every time. The wait before attempt *n* is random
/// between zero and `initialDelay * 2^(n-1)` capped at `maximumDelay` ("full jitter"), and
/// never shorter than the server's `Retry-After`. When the server asks for a wait longer than
/// `maximumDelay`, the error is thrown at once instead.
///
/// ```swift
/// let client = HTTPClient(baseURL: url, retryPolicy: HTTPRetryPolicy(maximumAttempts: 5))
/// ```
public struct HTTPRetryPolicy: Sendable, Hashable {
  /// Attempts in all, the first one included; 1 means no retry.
  public var maximumAttempts: Int
  /// The back-off ceiling of the first retry.
  public var initialDelay: Duration
  /// The longest wait between two attempts.
  public var maximumDelay: Duration

  /// Creates a policy.
  public init(
    maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(200),
    maximumDelay: Duration = .seconds(10)
  ) {
    self.maximumAttempts = max(1, maximumAttempts)
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
  }

  /// Three attempts, 200 ms initial back-off, at most 10 s between attempts.
  public static let `default` = HTTPRetryPolicy()

  /// No retries.
  public static let none = HTTPRetryPolicy(maximumAttempts: 1)

  /// Whether `error` is worth another attempt of an idempotent request.
  static func isTransient(_ error: HTTPError) -> Bool {
    switch error {
    // A TLS refusal (a certificate refused either way) fails the same way next time: not
    // retried. The TLS layer typed it; the words are not consulted.
    case .unreachable(_, let reason): reason.tlsRefusal == nil
    case .timedOut, .truncated: true
    case .status(let code, _, _, _): [408, 429, 500, 502, 503, 504].contains(code)
    default: false
    }
  }

  /// The wait before retry number `retry` (1-based), or `nil` to give up because the server
  /// asked for longer than ``maximumDelay``.
  func delay(
    beforeRetry retry: Int, retryAfter: Double?, random: Double = Double.random(in: 0...1)
  ) -> Duration? {
    if let retryAfter, retryAfter > maximumDelay.seconds { return nil }
    let backoff = Backoff(initial: initialDelay, maximum: maximumDelay)
    return backoff.delay(
      afterFailures: retry, retryAfter: retryAfter.map { .clamped(seconds: $0) }, random: random)
  }
}
