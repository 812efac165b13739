import Foundation

extension RunLoop {
  /// The run loop scheduler's time type: a `Date`, with strides in seconds (the same type as
  /// `OperationQueue.SchedulerTimeType`).
  public typealias SchedulerTimeType = OperationQueue.SchedulerTimeType

  /// Options for the run loop scheduler: none are defined (Combine's is empty too).
  public struct SchedulerOptions: Sendable {
    /// Creates empty options.
    public init() {}
  }

  /// This run loop as a ``Scheduler``: its actions run as timers on the run loop, in its
  /// default mode.
  ///
  /// Swift 6's Foundation declares `RunLoop` not `Sendable` (most of its methods belong to its
  /// own thread), so it cannot be a `Scheduler` itself; the operators that take a scheduler
  /// take a `RunLoop` too and use this, so `receive(on: RunLoop.main)` reads as in Combine.
  /// The run loop must be running: on Linux nothing runs the main run loop unless the program
  /// does (XCTest's `wait(for:timeout:)` does), so prefer `DispatchQueue` on servers.
  public var scheduler: RunLoopScheduler { RunLoopScheduler(self) }
}

/// A run loop as a ``Scheduler``: `RunLoop.main.scheduler`, or a `RunLoop` passed to an
/// operator that takes a scheduler.
///
/// Each action is a one-off (or repeating) `Timer` added to the run loop in its default mode,
/// so actions scheduled for the same date run in the order they were scheduled.
public struct RunLoopScheduler: Scheduler, @unchecked Sendable {
  // @unchecked: the run loop is only used to add timers (`CFRunLoopAddTimer`, which takes the
  // run loop's own lock and may be called from any thread); nothing else of it is touched.

  /// The scheduler's time type: a `Date`, with strides in seconds.
  public typealias SchedulerTimeType = RunLoop.SchedulerTimeType
  /// Options for the run loop scheduler: none are defined.
  public typealias SchedulerOptions = RunLoop.SchedulerOptions

  /// The run loop that runs the actions.
  public let runLoop: RunLoop

  /// Creates a scheduler for `runLoop`.
  public init(_ runLoop: RunLoop) { self.runLoop = runLoop }

  /// The current date.
  public var now: SchedulerTimeType { SchedulerTimeType(Date()) }

  /// The minimum tolerance allowed by the scheduler: zero.
  public var minimumTolerance: SchedulerTimeType.Stride { 0 }

  /// Runs the action on the run loop at its next turn.
  public func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void) {
    add(Timer(fire: Date(), interval: 0, repeats: false) { _ in action() })
  }

  /// Runs the action on the run loop at `date`.
  public func schedule(
    after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void
  ) {
    let timer = Timer(fire: date.date, interval: 0, repeats: false) { _ in action() }
    timer.tolerance = max(tolerance.magnitude, 0)
    add(timer)
  }

  /// Runs the action on the run loop at `date`, then every `interval`, until the returned value
  /// is cancelled.
  public func schedule(
    after date: SchedulerTimeType, interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    let timer = Timer(fire: date.date, interval: max(interval.magnitude, 0), repeats: true) {
      _ in action()
    }
    timer.tolerance = max(tolerance.magnitude, 0)
    add(timer)
    return RunLoopTimer(timer)
  }

  private func add(_ timer: Timer) {
    runLoop.add(timer, forMode: .default)
  }
}

/// Stops a repeating run loop action.
// @unchecked Sendable: `invalidate()` (`CFRunLoopTimerInvalidate`) takes the timer's own lock
// and may be called from any thread; `timer` is immutable.
private final class RunLoopTimer: Cancellable, @unchecked Sendable {
  private let timer: Timer

  init(_ timer: Timer) { self.timer = timer }

  deinit { timer.invalidate() }

  func cancel() { timer.invalidate() }
}
