import Dispatch
import Streams
import TestSupport
import Testing

@Suite struct SchedulerTests {
  typealias Stride = DispatchQueue.SchedulerTimeType.Stride

  @Test func strideUnitsConvertToNanoseconds() {
    #expect(Stride.seconds(2).magnitude == 2_000_000_000)
    #expect(Stride.seconds(0.5).magnitude == 500_000_000)
    #expect(Stride.milliseconds(3).magnitude == 3_000_000)
    #expect(Stride.microseconds(4).magnitude == 4_000)
    #expect(Stride.nanoseconds(5).magnitude == 5)
    #expect(Stride(integerLiteral: 1) == .seconds(1))
    #expect(Stride(floatLiteral: 0.25) == .milliseconds(250))
    #expect(Stride(exactly: 7) == .nanoseconds(7))
    #expect(Stride(.never).magnitude == Int.max)
  }

  @Test func strideArithmeticAndOrderingSaturate() {
    #expect(Stride.seconds(1) + .milliseconds(500) == .milliseconds(1500))
    #expect(Stride.seconds(1) - .milliseconds(1500) == .milliseconds(-500))
    #expect(-Stride.seconds(1) == .seconds(-1))
    #expect(Stride.milliseconds(1) < .seconds(1))
    #expect(Stride.nanoseconds(.max) + .nanoseconds(1) == .nanoseconds(.max))
    #expect(Stride.seconds(.max).magnitude == .max)
  }

  @Test func dispatchTimeAdvancesAndMeasuresDistance() {
    let start = DispatchQueue.SchedulerTimeType(DispatchTime(uptimeNanoseconds: 1_000))
    let later = start.advanced(by: .microseconds(2))
    #expect(later.dispatchTime.uptimeNanoseconds == 3_000)
    #expect(start.distance(to: later) == .microseconds(2))
    #expect(later.distance(to: start) == .microseconds(-2))
    #expect(start < later)
    #expect(later.advanced(by: .seconds(-10)).dispatchTime.uptimeNanoseconds == 1)
  }

  @Test func dispatchQueueRunsScheduledActionsOnTheQueue() async {
    let queue = DispatchQueue(label: "SchedulerTests.dispatch")
    let ranAfter = await withCheckedContinuation { continuation in
      let start = queue.now
      queue.schedule(after: start.advanced(by: .milliseconds(20))) {
        dispatchPrecondition(condition: .onQueue(queue))
        continuation.resume(returning: start.distance(to: queue.now))
      }
    }
    #expect(ranAfter >= .milliseconds(20))

    await withCheckedContinuation { continuation in
      queue.schedule(options: .init(qos: .userInitiated)) {
        dispatchPrecondition(condition: .onQueue(queue))
        continuation.resume()
      }
    }
  }

  @Test func dispatchQueueRepeatsUntilCancelled() async {
    let queue = DispatchQueue(label: "SchedulerTests.repeat")
    let ticks = LockedState(0)
    let third = LockedState<CheckedContinuation<Void, Never>?>(nil)
    let timer = LockedState<(any Cancellable)?>(nil)
    await withCheckedContinuation { continuation in
      third.withLock { $0 = continuation }
      let cancellable = queue.schedule(after: queue.now, interval: .milliseconds(1)) {
        let count = ticks.withLock { ticks in
          ticks += 1
          return ticks
        }
        if count == 3 { third.withLock { $0.take() }?.resume() }
      }
      timer.withLock { $0 = cancellable }
    }
    timer.withLock { $0 }?.cancel()
    let afterCancel = queue.sync { ticks.withLock { $0 } }
    // Wait on a later one-shot action on the same queue: a live timer would have ticked by then.
    await withCheckedContinuation { continuation in
      queue.schedule(after: queue.now.advanced(by: .milliseconds(20))) { continuation.resume() }
    }
    #expect(afterCancel >= 3)
    #expect(ticks.withLock { $0 } == afterCancel)
  }

  @Test func immediateSchedulerRunsEverythingAtOnceOnTheCallingThread() {
    let scheduler = ImmediateScheduler.shared
    let log = LockedState<[String]>([])
    scheduler.schedule { log.withLock { $0.append("now") } }
    scheduler.schedule(after: scheduler.now.advanced(by: .seconds(100))) {
      log.withLock { $0.append("later") }
    }
    let cancellable = scheduler.schedule(after: scheduler.now, interval: .seconds(1)) {
      log.withLock { $0.append("once") }
    }
    cancellable.cancel()
    #expect(log.withLock { $0 } == ["now", "later", "once"])
    #expect(scheduler.now.distance(to: scheduler.now.advanced(by: .seconds(1))) == .seconds(0))
  }
}
