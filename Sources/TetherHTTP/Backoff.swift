import TetherSupport

/// How long to wait before trying again after failures: the one back-off every Tether module
/// uses (HTTP retries, `.http` polling and server-sent events, remote-config polling, etcd
/// reconnections, Firebase realtime).
///
/// After *n* consecutive failures the ceiling is `initial * multiplier^(n-1)`, capped at
/// `maximum`. With ``Jitter/full`` the wait is random between `minimum` and that ceiling
/// ("full jitter", so that many clients that failed together do not come back together);
/// with ``Jitter/equal`` between half the ceiling and the ceiling; with ``Jitter/none`` it is
/// the ceiling. A server's `Retry-After` is a floor, itself never
/// beyond `maximum` (a hostile header cannot stop a client for years), and with
/// `maximumFailures` the back-off gives up: ``delay(afterFailures:retryAfter:random:)``
/// returns `nil`.
///
/// ```swift
/// let backoff = Backoff(initial: .milliseconds(200), maximum: .seconds(10))
/// var failures = 0
/// while true {
///   do { return try await fetch() } catch {
///     failures += 1
///     guard let wait = backoff.delay(afterFailures: failures) else { throw error }
///     try await Task.sleep(for: wait)
///   }
/// }
/// ```
public struct Backoff: Sendable, Hashable {
  /// How the wait is spread below its ceiling.
  public enum Jitter: Sendable, Hashable {
    /// Random between ``Backoff/minimum`` and the ceiling.
    case full
    /// Half the ceiling plus a random part of the other half ("equal jitter"): never much
    /// shorter than the ceiling, still spread; never under ``Backoff/minimum``.
    case equal
    /// Exactly the ceiling.
    case none
  }

  /// The ceiling after the first failure.
  public var initial: Duration
  /// The longest wait, whatever the failure count or the server asks for.
  public var maximum: Duration
  /// How much the ceiling grows per further failure (at least 1).
  public var multiplier: Double
  /// The shortest wait (for polling: the poll interval).
  public var minimum: Duration
  /// How the wait is spread below its ceiling.
  public var jitter: Jitter
  /// After this many consecutive failures, give up (`nil`: never).
  public var maximumFailures: Int?

  /// Creates a back-off. `maximum` is raised to `initial` and `minimum` lowered to
  /// `maximum` when they would cross.
  public init(
    initial: Duration, maximum: Duration, multiplier: Double = 2, minimum: Duration = .zero,
    jitter: Jitter = .full, maximumFailures: Int? = nil
  ) {
    self.initial = max(.zero, initial)
    self.maximum = max(self.initial, maximum)
    self.multiplier = multiplier.isFinite ? max(1, multiplier) : 2
    self.minimum = min(max(.zero, minimum), self.maximum)
    self.jitter = jitter
    self.maximumFailures = maximumFailures.map { max(0, $0) }
  }

  /// The ceiling of the wait after `failures` consecutive failures (0: ``minimum``).
  public func ceiling(afterFailures failures: Int) -> Duration {
    engineCeiling(afterFailures: failures)
  }

  /// The wait after `failures` consecutive failures, never shorter than `retryAfter` (itself
  /// capped at ``maximum``), or `nil` when the back-off gives up (more than
  /// ``maximumFailures``).
  ///
  /// - Parameters:
  ///   - failures: Consecutive failures so far (0: healthy).
  ///   - retryAfter: How long the server asked to wait, if it did.
  ///   - random: A value in `0...1` that places the wait under its ceiling; the default draws
  ///     one (tests pass their own).
  public func delay(
    afterFailures failures: Int, retryAfter: Duration? = nil,
    random: Double = Double.random(in: 0...1)
  ) -> Duration? {
    engineDelay(afterFailures: failures, retryAfter: retryAfter, random: random)
  }
}

// The arithmetic lives in TetherSupport's `BackoffEngine`; this type is its public face.
extension Backoff: BackoffEngine {
  package var spread: BackoffSpread {
    switch jitter {
    case .full: .full
    case .equal: .equal
    case .none: .none
    }
  }
}
