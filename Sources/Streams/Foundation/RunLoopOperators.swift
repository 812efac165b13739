import Foundation

/// The operators that take a scheduler, taking a `RunLoop` as Combine code passes it
/// (`receive(on: RunLoop.main)`): each uses the run loop's ``RunLoop/scheduler``.
extension Publisher {
  /// Delivers values and the completion on `runLoop`; see `receive(on:options:)` with a scheduler.
  public func receive(
    on runLoop: RunLoop, options: RunLoop.SchedulerOptions? = nil
  ) -> Publishers.ReceiveOn<Self, RunLoopScheduler> {
    receive(on: runLoop.scheduler, options: options)
  }

  /// Subscribes, requests and cancels on `runLoop`; see `subscribe(on:options:)` with a scheduler.
  public func subscribe(
    on runLoop: RunLoop, options: RunLoop.SchedulerOptions? = nil
  ) -> Publishers.SubscribeOn<Self, RunLoopScheduler> {
    subscribe(on: runLoop.scheduler, options: options)
  }

  /// Publishes an element only after `dueTime` without another, timed on `scheduler`; see
  /// `debounce(for:scheduler:options:)` with a scheduler.
  public func debounce(
    for dueTime: RunLoop.SchedulerTimeType.Stride, scheduler: RunLoop,
    options: RunLoop.SchedulerOptions? = nil
  ) -> Publishers.Debounce<Self, RunLoopScheduler> {
    debounce(for: dueTime, scheduler: scheduler.scheduler, options: options)
  }

  /// Publishes at most one element per `interval`, timed on `scheduler`; see
  /// `throttle(for:scheduler:latest:)` with a scheduler.
  public func throttle(
    for interval: RunLoop.SchedulerTimeType.Stride, scheduler: RunLoop, latest: Bool
  ) -> Publishers.Throttle<Self, RunLoopScheduler> {
    throttle(for: interval, scheduler: scheduler.scheduler, latest: latest)
  }

  /// Delays every event by `interval` on `scheduler`; see
  /// `delay(for:tolerance:scheduler:options:)` with a scheduler.
  public func delay(
    for interval: RunLoop.SchedulerTimeType.Stride,
    tolerance: RunLoop.SchedulerTimeType.Stride? = nil, scheduler: RunLoop,
    options: RunLoop.SchedulerOptions? = nil
  ) -> Publishers.Delay<Self, RunLoopScheduler> {
    delay(for: interval, tolerance: tolerance, scheduler: scheduler.scheduler, options: options)
  }

  /// Fails or finishes when no element arrives within `interval`, timed on `scheduler`; see
  /// `timeout(_:scheduler:options:customError:)` with a scheduler.
  public func timeout(
    _ interval: RunLoop.SchedulerTimeType.Stride, scheduler: RunLoop,
    options: RunLoop.SchedulerOptions? = nil, customError: (@Sendable () -> Failure)? = nil
  ) -> Publishers.Timeout<Self, RunLoopScheduler> {
    timeout(interval, scheduler: scheduler.scheduler, options: options, customError: customError)
  }
}
