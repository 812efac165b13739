import Foundation
import TetherHTTP

/// When a realtime connection reconnects, as a value: it takes what happened to the last
/// connection and answers what to do next, with no I/O and no clock of its own, so that every
/// rule is tested without a socket (the Firebase SDKs' realtime reconnection rules):
///
/// - a stream that was open and then ended or dropped reconnects soon (within a second,
///   jittered so that clients a server restart dropped together come back apart);
/// - a connection that failed with a status the SDKs retry (408, 429, 502, 503, 504) or a
///   network failure waits the reconnection back-off (minutes by default), doubling;
/// - any other status stops realtime: retrying cannot help, and would only load the service;
/// - `retryIntervalSeconds` holds back the next reconnection only (until the message's time
///   plus that many seconds); later ones follow the back-off again.
package struct RealtimeReconnection: Sendable {
  /// What happened to a connection.
  package enum Outcome: Sendable, Equatable {
    /// The stream was open, then ended or dropped (with the error, when it dropped).
    case ended(RemoteConfigError?)
    /// The connection could not be opened, for a reason worth retrying.
    case failed(RemoteConfigError)
    /// The server refused the connection with a status that cannot be retried.
    case refused(RemoteConfigError)
    /// The server said realtime is disabled for the project.
    case disabled
  }

  /// What to do next.
  package enum Action: Sendable, Equatable {
    /// Reconnect after `delay`; `failures` counts the consecutive failed connections.
    case reconnect(after: Duration, failures: Int, reason: RemoteConfigError?)
    /// Stop realtime in this state.
    case stop(FirebaseRealtimeState)
  }

  /// The statuses the SDKs retry; any other refusal stops realtime.
  package static let retryableStatuses: Set<Int> = [408, 429, 502, 503, 504]

  /// The back-off after failed connections.
  package let backoff: Backoff
  /// The wait after an open stream ended: at most a second, never more than the back-off's
  /// first step (so that tests with a short back-off stay short).
  package let afterStream: Backoff
  /// Consecutive failed connections.
  package private(set) var failures = 0
  /// The earliest time of the next reconnection, from `retryIntervalSeconds`; used once.
  package private(set) var notBefore: Date?

  package init(backoff: Backoff) {
    self.backoff = backoff
    let short = min(backoff.initial, .seconds(1))
    afterStream = Backoff(initial: short, maximum: short, multiplier: 1, jitter: .full)
  }

  /// Whether a connection answered `status` may be retried.
  package static func isRetryable(status: Int) -> Bool { retryableStatuses.contains(status) }

  /// The stream opened: the failures so far are forgiven.
  package mutating func connected() { failures = 0 }

  /// The server asked, at `now`, for the next reconnection to wait `seconds`.
  package mutating func retryInterval(seconds: Double, at now: Date) {
    guard seconds.isFinite, seconds > 0 else { return }
    notBefore = now.addingTimeInterval(min(seconds, 24 * 60 * 60))
  }

  /// What to do after `outcome`, at `now`; `random` places the wait under its ceiling.
  package mutating func next(
    after outcome: Outcome, now: Date, random: Double = Double.random(in: 0...1)
  ) -> Action {
    let wait: Duration
    let reason: RemoteConfigError?
    switch outcome {
    case .disabled: return .stop(.disabled)
    case .refused(let error): return .stop(.stopped(error))
    case .ended(let error):
      wait = afterStream.delay(afterFailures: 1, random: random) ?? afterStream.maximum
      reason = error
    case .failed(let error):
      failures += 1
      wait = backoff.delay(afterFailures: failures, random: random) ?? backoff.maximum
      reason = error
    }
    // The server's interval is a floor for this one reconnection only.
    let floor = notBefore.map { Duration.seconds(max(0, $0.timeIntervalSince(now))) } ?? .zero
    notBefore = nil
    return .reconnect(after: max(wait, floor), failures: failures, reason: reason)
  }
}

extension Duration {
  /// The duration in seconds, for `Date` arithmetic.
  var timeInterval: TimeInterval {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}
