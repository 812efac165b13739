import Foundation
import TetherHTTP

/// Whether a ``FirebaseConfigSource`` may fetch now, as a value: it takes the server's
/// throttling answers and successes and answers with the error a fetch fails with while the
/// back-off lasts, with no I/O and no clock of its own, by the Firebase SDKs' rules:
///
/// - 429, 500, 503 and 504 start an exponential back-off: the first wait is the source's
///   `throttleBackoff`, doubled for each further throttling answer in a row, randomized
///   between half and all of its ceiling, at most 4 h and at least the server's `Retry-After`;
/// - until it ends every fetch fails at once, with the status that started it and the seconds
///   left, and sends no request;
/// - an answer that is not throttling (a template, not modified) ends it and forgives the count;
/// - a network failure is not an answer: nothing here is told of it, so it never extends the
///   back-off (an old iOS SDK bug did).
package struct FirebaseFetchThrottle: Sendable {
  /// The statuses that throttle (after the source maps `INSTANCE_STATE_UNSPECIFIED` to 500).
  package static let throttlingStatuses: Set<Int> = [429, 500, 503, 504]

  /// The longest back-off.
  package static let maximumWait: Duration = .seconds(4 * 60 * 60)

  /// The back-off: the first wait doubled per throttling answer, with equal jitter.
  package let backoff: Backoff
  /// Throttling answers in a row since the last answer that was not one.
  package private(set) var consecutiveAnswers = 0
  /// When the current back-off ends; `nil` when none was started since the last success.
  package private(set) var until: Date?
  /// The error of the answer that started the current back-off.
  private var cause: RemoteConfigError?

  /// A throttle whose first back-off is `initialBackoff` seconds (at most 4 h).
  package init(initialBackoff: TimeInterval) {
    backoff = Backoff(
      initial: .milliseconds(Int64(min(max(0, initialBackoff), 4 * 60 * 60) * 1000)),
      maximum: Self.maximumWait, jitter: .equal)
  }

  /// Whether an answer with `status` throttles.
  package static func isThrottling(status: Int) -> Bool { throttlingStatuses.contains(status) }

  /// When the back-off ends, or `nil` when a fetch at `now` may go.
  package func throttledUntil(at now: Date) -> Date? {
    until.flatMap { $0 > now ? $0 : nil }
  }

  /// The error a fetch at `now` fails with without a request, or `nil` when it may go: the
  /// status that started the back-off and the whole seconds left.
  package func refusal(at now: Date) -> RemoteConfigError? {
    guard let until, until > now else { return nil }
    let remaining = until.timeIntervalSince(now).rounded(.up)
    return switch cause {
    case .serverError(let status, _)?: .serverError(status: status, retryAfter: remaining)
    default: .throttled(status: 429, retryAfter: remaining)
    }
  }

  /// Records a throttling answer with `status` at `now` (`retryAfter`: the server's
  /// `Retry-After` in seconds) and returns the error that fetch fails with, carrying the whole
  /// wait. `random` places the wait under its ceiling.
  package mutating func throttled(
    status: Int, retryAfter: TimeInterval?, at now: Date,
    random: Double = Double.random(in: 0...1)
  ) -> RemoteConfigError {
    consecutiveAnswers += 1
    let delay =
      backoff.delay(
        afterFailures: consecutiveAnswers,
        retryAfter: retryAfter.map { .milliseconds(Int64($0 * 1000)) }, random: random)
      ?? backoff.maximum
    let wait = delay.timeInterval
    until = now.addingTimeInterval(wait)
    let error: RemoteConfigError =
      status == 429
      ? .throttled(status: 429, retryAfter: wait)
      : .serverError(status: status, retryAfter: wait)
    cause = error
    return error
  }

  /// Records an answer that was not throttling: the back-off ends and the count starts over.
  package mutating func answered() {
    consecutiveAnswers = 0
    until = nil
    cause = nil
  }
}
