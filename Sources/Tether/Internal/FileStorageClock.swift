import Dispatch
import Synchronization

/// The time source that throttles a file key's writes. The system clock in production; tests
/// inject a manual clock so throttling is checked without waiting.
protocol FileStorageClock: Sendable {
  /// The current time, measured from an arbitrary fixed origin.
  var now: Duration { get }
  /// Runs `action` once `delay` has passed, on some thread, unless the timer is cancelled.
  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> FileTimer
}

/// A scheduled action of a ``FileStorageClock``.
final class FileTimer: Sendable {
  private let onCancel: Lock<(@Sendable () -> Void)?>

  init(_ onCancel: @escaping @Sendable () -> Void) {
    self.onCancel = Lock(onCancel)
  }

  /// Stops the action from running if it has not started yet.
  func cancel() {
    let action = onCancel.withLock { action in
      defer { action = nil }
      return action
    }
    action?()
  }
}

/// The monotonic system clock, with timers on a global Dispatch queue.
struct SystemFileStorageClock: FileStorageClock {
  private static let origin = ContinuousClock.now

  var now: Duration { ContinuousClock.now - Self.origin }

  func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> FileTimer {
    let (seconds, attoseconds) = delay.components
    let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    let box = CancelFlag()
    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
      if !box.isCancelled { action() }
    }
    return FileTimer { box.cancel() }
  }
}

/// A flag a timer checks before running its action.
private final class CancelFlag: Sendable {
  private let flag = Atomic<Bool>(false)
  var isCancelled: Bool { flag.load(ordering: .acquiring) }
  func cancel() { flag.store(true, ordering: .releasing) }
}
