import Dispatch
import Foundation
import TetherSupport

extension OperationQueue: Scheduler {
  /// Options for the operation queue scheduler: none are defined (Combine's is empty too).
  public struct SchedulerOptions: Sendable {
    /// Creates empty options.
    public init() {}
  }

  /// The current date.
  public var now: SchedulerTimeType { SchedulerTimeType(Date()) }

  /// The minimum tolerance allowed by the scheduler: zero.
  public var minimumTolerance: SchedulerTimeType.Stride { 0 }

  /// Adds the action to the queue as an operation; it runs when the queue gets to it (in order,
  /// on a queue whose `maxConcurrentOperationCount` is 1).
  ///
  /// The action is released as soon as it has run, before the operation counts as finished: a
  /// subscription it captured does not outlive its last delivery (swift-corelibs-foundation
  /// keeps a finished operation, and its block, a little after `waitUntilAllOperationsAreFinished`
  /// returns).
  public func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void) {
    let once = RunOnce(action)
    addOperation { once.run() }
  }

  /// Adds the action to the queue at `date` (at once when `date` has passed).
  public func schedule(
    after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void
  ) {
    OperationQueueTimers.queue.asyncAfter(deadline: .after(date.date)) { [self] in
      let once = RunOnce(action)
      addOperation { once.run() }
    }
  }

  /// Adds the action to the queue at `date`, then every `interval`, until the returned value is
  /// cancelled.
  public func schedule(
    after date: SchedulerTimeType, interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    let timer = DispatchSource.makeTimerSource(queue: OperationQueueTimers.queue)
    timer.setEventHandler { [self] in addOperation(action) }
    timer.schedule(
      deadline: .after(date.date), repeating: max(interval.magnitude, 0),
      leeway: .nanoseconds(Int(max(tolerance.magnitude, 0) * 1e9)))
    timer.resume()
    return DispatchTimerCancellable(timer)
  }
}

/// An action that lets go of its closure once it has run.
private final class RunOnce: Sendable {
  private let action: Lock<(@Sendable () -> Void)?>

  init(_ action: @escaping @Sendable () -> Void) { self.action = Lock(action) }

  func run() {
    let action = action.withLock { action in
      defer { action = nil }
      return action
    }
    action?()
  }
}

/// The serial queue on which operation queue schedulers wait for a date before adding an
/// operation (an `OperationQueue` has no timers of its own).
private enum OperationQueueTimers {
  static let queue = DispatchQueue(label: "Streams.OperationQueue.timers")
}

extension DispatchTime {
  /// The dispatch time at which `date` arrives (now, when it has passed).
  fileprivate static func after(_ date: Date) -> DispatchTime {
    let seconds = max(date.timeIntervalSinceNow, 0)
    return .now() + .nanoseconds(Int(min(seconds, 1e9) * 1e9))
  }
}
