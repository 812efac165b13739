/// How long polling waits before the next attempt.
enum Backoff {
  /// After `failures` consecutive failures (0 = healthy), the wait in seconds: the poll
  /// interval when healthy; otherwise a random wait between the interval and
  /// `interval * 2^failures` capped at `cap` ("full jitter" above the interval), or that
  /// ceiling exactly without jitter; never shorter than the server's `Retry-After`, which
  /// itself never stretches the wait beyond `cap` (a hostile `Retry-After` cannot stop
  /// polling for years).
  static func delay(
    failures: Int, interval: Double, cap: Double, jitter: Bool, retryAfter: Double?,
    random: () -> Double = { Double.random(in: 0...1) }
  ) -> Double {
    var delay = interval
    if failures > 0 {
      let ceiling = max(interval, min(cap, interval * Double(1 << min(failures, 30))))
      delay = jitter ? interval + random() * (ceiling - interval) : ceiling
    }
    let requested = retryAfter.map { $0.isFinite ? min(max(0, $0), max(cap, interval)) : 0 } ?? 0
    return max(delay, requested)
  }
}
