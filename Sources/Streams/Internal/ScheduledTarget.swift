/// An operator that scheduler actions call back into, with a payload.
///
/// Time-based operators hand work to a `Scheduler` as `@Sendable` closures. A closure that
/// captured the operator's own generic type would capture its subscriber's metatype, which is
/// not `Sendable` (Swift 6.2's `SendableMetatype` checking warns about it); capturing the
/// operator as this existential, named by its payload type only, does not.
protocol ScheduledTarget<Payload>: AnyObject, Sendable {
  associatedtype Payload
  /// Runs on the scheduler's context with the payload given when the action was scheduled.
  func receiveScheduled(_ payload: Payload)
}

extension Scheduler {
  /// Schedules `target.receiveScheduled(payload)` at the next opportunity.
  func schedule<Payload>(
    options: SchedulerOptions?, _ payload: Payload, to target: any ScheduledTarget<Payload>
  ) {
    let carried = ScheduledValue(value: payload)
    schedule(options: options) { target.receiveScheduled(carried.value) }
  }

  /// Schedules `target.receiveScheduled(payload)` for `date`.
  func schedule<Payload>(
    after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?, _ payload: Payload, to target: any ScheduledTarget<Payload>
  ) {
    let carried = ScheduledValue(value: payload)
    schedule(after: date, tolerance: tolerance, options: options) {
      target.receiveScheduled(carried.value)
    }
  }
}

/// Carries one value into a `@Sendable` scheduler action.
// @unchecked Sendable: no lock is needed because ownership moves with the action: the value
// is used by that one action only, once, and nothing else keeps a reference to it.
struct ScheduledValue<Value>: @unchecked Sendable {
  let value: Value
}

/// A ``ScheduledTarget`` held weakly by a scheduled action or an observer, for operators and
/// sources whose timers may outlive the stream (`timeout`, `collect(_:options:)`, timers,
/// notification observers): the action does nothing once the target is gone.
// @unchecked Sendable: no lock is needed because `target` is only written in init; loading a
// `weak` reference is atomic. (A weak existential of the target's own protocol: casting an
// `AnyObject` back to `any ScheduledTarget<Payload>` on every tick costs microseconds.)
final class WeakTarget<Payload>: @unchecked Sendable {
  private weak var target: (any ScheduledTarget<Payload>)?

  init(_ target: any ScheduledTarget<Payload>) {
    self.target = target
  }

  func receiveScheduled(_ payload: Payload) {
    target?.receiveScheduled(payload)
  }
}
