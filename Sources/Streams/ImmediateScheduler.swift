import Dispatch

/// A scheduler for performing synchronous actions.
///
/// Every action runs at once, on the calling thread, whatever date it is scheduled for; a
/// repeating action runs once. Use it where an operator needs a scheduler but the work should
/// stay synchronous.
public struct ImmediateScheduler: Scheduler {
  /// The time type of the immediate scheduler: every instant is the same instant.
  public struct SchedulerTimeType: Strideable, Hashable, Sendable {
    /// The stride of the immediate scheduler: any interval, in nanoseconds.
    public typealias Stride = DispatchQueue.SchedulerTimeType.Stride

    /// Returns the distance to another immediate scheduler time, which is always zero.
    public func distance(to other: SchedulerTimeType) -> Stride { .nanoseconds(0) }

    /// Returns this time: advancing the immediate scheduler's clock has no effect.
    public func advanced(by n: Stride) -> SchedulerTimeType { self }

    /// Every immediate scheduler time is equal to every other, so none is smaller.
    public static func < (lhs: SchedulerTimeType, rhs: SchedulerTimeType) -> Bool { false }
  }

  /// The immediate scheduler takes no options.
  public typealias SchedulerOptions = Never

  /// The shared instance of the immediate scheduler.
  public static let shared = ImmediateScheduler()

  /// The immediate scheduler's only moment in time.
  public var now: SchedulerTimeType { SchedulerTimeType() }

  /// The minimum tolerance allowed by the scheduler: zero.
  public var minimumTolerance: SchedulerTimeType.Stride { .nanoseconds(0) }

  /// Runs the action at once, on the calling thread.
  public func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void) {
    action()
  }

  /// Runs the action at once, on the calling thread, ignoring `date`.
  public func schedule(
    after date: SchedulerTimeType,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) {
    action()
  }

  /// Runs the action once, at once, on the calling thread, and returns a cancellable that has
  /// nothing left to cancel.
  public func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    action()
    return AnyCancellable {}
  }
}
