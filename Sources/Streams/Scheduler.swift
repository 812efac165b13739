/// A protocol that defines when and how to execute a closure.
///
/// Time-based operators such as `debounce(for:scheduler:)`, `throttle(for:scheduler:latest:)`,
/// `delay(for:scheduler:)` and `receive(on:)` take a scheduler, so the same pipeline can run on a
/// `DispatchQueue` in production and on a virtual-time ``TestScheduler`` in tests:
///
/// ```swift
/// let scheduler = TestScheduler()
/// subject.debounce(for: .seconds(1), scheduler: scheduler).sink { print($0) }
/// scheduler.advance(by: .seconds(1))
/// ```
///
/// Schedulers are `Sendable` and their actions are `@Sendable`: an action may run on any
/// thread the scheduler chooses, but the actions of one scheduler that is serial (a serial
/// `DispatchQueue`, ``ImmediateScheduler``, ``TestScheduler``) never overlap.
public protocol Scheduler<SchedulerTimeType>: Sendable {
  /// The type that describes an instant of the scheduler's clock.
  associatedtype SchedulerTimeType: Strideable & Sendable
  where SchedulerTimeType.Stride: SchedulerTimeIntervalConvertible & Sendable

  /// The type of scheduler-specific options, such as a quality of service.
  associatedtype SchedulerOptions: Sendable

  /// This scheduler's definition of the current moment in time.
  var now: SchedulerTimeType { get }

  /// The minimum tolerance allowed by the scheduler.
  var minimumTolerance: SchedulerTimeType.Stride { get }

  /// Performs the action at the next possible opportunity.
  func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void)

  /// Performs the action at some time after the specified date.
  func schedule(
    after date: SchedulerTimeType,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  )

  /// Performs the action at some time after the specified date, then again every `interval`,
  /// until the returned value is cancelled.
  func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable
}

extension Scheduler {
  /// Performs the action at the next possible opportunity, with no options.
  public func schedule(_ action: @escaping @Sendable () -> Void) {
    schedule(options: nil, action)
  }

  /// Performs the action at some time after the specified date, with the given tolerance.
  public func schedule(
    after date: SchedulerTimeType,
    tolerance: SchedulerTimeType.Stride,
    _ action: @escaping @Sendable () -> Void
  ) {
    schedule(after: date, tolerance: tolerance, options: nil, action)
  }

  /// Performs the action at some time after the specified date, with the minimum tolerance.
  public func schedule(after date: SchedulerTimeType, _ action: @escaping @Sendable () -> Void) {
    schedule(after: date, tolerance: minimumTolerance, options: nil, action)
  }

  /// Performs the action after the specified date and then every `interval`, with the given
  /// tolerance, until the returned value is cancelled.
  public func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    schedule(after: date, interval: interval, tolerance: tolerance, options: nil, action)
  }

  /// Performs the action after the specified date and then every `interval`, with the minimum
  /// tolerance, until the returned value is cancelled.
  public func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    schedule(
      after: date, interval: interval, tolerance: minimumTolerance, options: nil, action)
  }
}
