/// The computation behind TetherHTTP's public `Backoff`: ceilings that grow per failure,
/// spread below the ceiling, a server's `Retry-After` as a floor, and giving up.
///
/// `Backoff` is the one back-off of every module and its documented, public face (see it for
/// the rules): it holds the parameters, keeps them in range, and takes its answers from
/// here, so the arithmetic and its guards against hostile or non-finite input exist once.
package protocol BackoffEngine {
  /// The ceiling after the first failure.
  var initial: Duration { get }
  /// The longest wait.
  var maximum: Duration { get }
  /// How much the ceiling grows per further failure (at least 1).
  var multiplier: Double { get }
  /// The shortest wait.
  var minimum: Duration { get }
  /// How the wait is spread below its ceiling.
  var spread: BackoffSpread { get }
  /// After this many consecutive failures, give up (`nil`: never).
  var maximumFailures: Int? { get }
}

/// How a back-off's wait is spread below its ceiling (`Backoff.Jitter`).
package enum BackoffSpread: Sendable, Hashable {
  /// Random between the minimum and the ceiling.
  case full
  /// Half the ceiling plus a random part of the other half.
  case equal
  /// Exactly the ceiling.
  case none
}

extension BackoffEngine {
  /// `initial * multiplier^(failures-1)` within `minimum...maximum` (0 failures: `minimum`).
  package func engineCeiling(afterFailures failures: Int) -> Duration {
    guard failures > 0 else { return minimum }
    let seconds = initial.seconds * power(multiplier, min(failures - 1, 64))
    return max(minimum, min(maximum, Duration.clamped(seconds: seconds)))
  }

  /// The wait after `failures` consecutive failures, placed under the ceiling by `random`
  /// (clamped to `0...1`), never shorter than `retryAfter` capped at `maximum`; `nil` past
  /// `maximumFailures`.
  package func engineDelay(
    afterFailures failures: Int, retryAfter: Duration?, random: Double
  ) -> Duration? {
    if let maximumFailures, failures > maximumFailures { return nil }
    let ceiling = engineCeiling(afterFailures: failures)
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
