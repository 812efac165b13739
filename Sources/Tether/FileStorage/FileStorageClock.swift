import Dispatch

/// The time source that throttles a file key's writes. The system clock in production; tests
/// inject a manual clock so throttling is checked without waiting.
protocol FileStorageClock: Sendable {
  /// The current time, measured from an arbitrary fixed origin.
  var now: Duration { get }
  /// Runs `action` once `delay` has passed, on some thread, unless the returned token is
  /// cancelled first.
  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CancelOnce
}

/// The monotonic system clock, with timers on a global Dispatch queue.
struct SystemFileStorageClock: FileStorageClock {
  private static let origin = ContinuousClock.now

  var now: Duration { ContinuousClock.now - Self.origin }

  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CancelOnce {
    let (seconds, attoseconds) = delay.components
    let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    let timer = CancelOnce {}
    // The closure holds the token, so releasing the caller's reference does not cancel it; a
    // cancel before the deadline does.
    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
      if !timer.isCancelled { action() }
    }
    return timer
  }
}
