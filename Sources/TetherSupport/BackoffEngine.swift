/// The computation behind TetherHTTP's public `Backoff`: ceilings that grow per failure,
/// spread below the ceiling, a server's `Retry-After` as a floor, and giving up.
///
/// `Backoff` is the one back-off of every module and its documented, public face; it holds
/// one of these and forwards to it, so the arithmetic (and its guards against hostile or
/// non-finite input) exists once. See `Backoff` for the rules.
package struct BackoffEngine: Sendable, Hashable {
  /// How the wait is spread below its ceiling (`Backoff.Jitter`).
  package enum Spread: Sendable, Hashable {
    case full, equal, none
  }

  package var initial: Duration
  package var maximum: Duration
  package var multiplier: Double
  package var minimum: Duration
  package var spread: Spread
  package var maximumFailures: Int?

  /// `maximum` is raised to `initial` and `minimum` lowered to `maximum` when they would
  /// cross; negative durations and counts become zero, a non-finite multiplier 2.
  package init(
    initial: Duration, maximum: Duration, multiplier: Double, minimum: Duration,
    spread: Spread, maximumFailures: Int?
  ) {
    self.initial = max(.zero, initial)
    self.maximum = max(self.initial, maximum)
    self.multiplier = multiplier.isFinite ? max(1, multiplier) : 2
    self.minimum = min(max(.zero, minimum), self.maximum)
    self.spread = spread
    self.maximumFailures = maximumFailures.map { max(0, $0) }
  }

  /// `initial * multiplier^(failures-1)` within `minimum...maximum` (0 failures: `minimum`).
  package func ceiling(afterFailures failures: Int) -> Duration {
    guard failures > 0 else { return minimum }
    let seconds = initial.seconds * power(multiplier, min(failures - 1, 64))
    return max(minimum, min(maximum, Duration.clamped(seconds: seconds)))
  }

  /// The wait after `failures` consecutive failures, placed under the ceiling by `random`
  /// (clamped to `0...1`), never shorter than `retryAfter` capped at `maximum`; `nil` past
  /// `maximumFailures`.
  package func delay(
    afterFailures failures: Int, retryAfter: Duration?, random: Double
  ) -> Duration? {
    if let maximumFailures, failures > maximumFailures { return nil }
    let ceiling = ceiling(afterFailures: failures)
    var wait = ceiling
    let fraction = random.isFinite ? min(1, max(0, random)) : 1
    if failures > 0 {
      switch spread {
      case .full: wait = minimum + (ceiling - minimum) * fraction
      case .equal: wait = max(minimum, ceiling / 2 + (ceiling / 2) * fraction)
      case .none: break
      }
    }
    if let retryAfter { wait = max(wait, min(max(.zero, retryAfter), maximum)) }
    return wait
  }
}

/// `x^count` for the back-off's growth, without Foundation; stops growing past 1e12 (any
/// ceiling is capped far below that).
private func power(_ x: Double, _ count: Int) -> Double {
  var result = 1.0
  var count = count
  while count > 0 && result < 1e12 {
    result *= x
    count -= 1
  }
  return result
}
