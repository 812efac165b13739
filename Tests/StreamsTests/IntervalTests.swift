import Dispatch
import Streams
import TestSupport
import Testing

@Suite struct IntervalTests {
  @Test func ticksEveryIntervalOnTheScheduler() {
    let scheduler = TestScheduler()
    let timeline = Timeline(
      Publishers.Interval(every: .seconds(1), scheduler: scheduler).map { _ in "tick" },
      on: scheduler)
    scheduler.advance(by: .milliseconds(3_500))
    #expect(timeline.events == ["1000ms tick", "2000ms tick", "3000ms tick"])
  }

  @Test func publishesTheSchedulersTime() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let recorder = RecordingSubscriber<TestScheduler.SchedulerTimeType, Never>()
    Publishers.Interval(every: .milliseconds(10), scheduler: scheduler).subscribe(recorder)
    scheduler.advance(by: .milliseconds(20))
    #expect(
      recorder.values.map { start.distance(to: $0) } == [.milliseconds(10), .milliseconds(20)])
  }

  @Test func startsWithDemandAndDropsTicksWithoutIt() {
    let scheduler = TestScheduler()
    let recorder = RecordingSubscriber<TestScheduler.SchedulerTimeType, Never>(
      initialDemand: .none)
    Publishers.Interval(every: .seconds(1), scheduler: scheduler).subscribe(recorder)
    scheduler.advance(by: .seconds(5))
    #expect(recorder.values.isEmpty)
    recorder.request(.max(2))
    scheduler.advance(by: .seconds(5))
    #expect(recorder.values.count == 2)
  }

  @Test func cancelStopsTheTimer() {
    let scheduler = TestScheduler()
    let recorder = RecordingSubscriber<TestScheduler.SchedulerTimeType, Never>()
    Publishers.Interval(every: .seconds(1), scheduler: scheduler).subscribe(recorder)
    scheduler.advance(by: .seconds(1))
    recorder.cancel()
    scheduler.advance(by: .seconds(5))
    #expect(recorder.values.count == 1)
  }

  @Test func keepsThePublisherContract() {
    // A timer never completes; `finish` ends it the way users do, with an operator that
    // finishes and cancels it at the next tick.
    let scheduler = TestScheduler()
    checkContract {
      let stopped = Guarded(false)
      let stop = {
        stopped.withLock { $0 = true }
        scheduler.advance(by: .milliseconds(1))
      }
      return ContractRig(
        publisher: Publishers.Interval(every: .milliseconds(1), scheduler: scheduler)
          .prefix { _ in !stopped.withLock { $0 } },
        send: { _ in scheduler.advance(by: .milliseconds(1)) }, finish: stop, fail: stop)
    }
  }

  @Test func ticksOnARealDispatchQueue() async throws {
    let queue = DispatchQueue(label: "interval-test")
    let recorder = RecordingSubscriber<DispatchQueue.SchedulerTimeType, Never>()
    Publishers.Interval(every: .milliseconds(5), scheduler: queue).subscribe(recorder)
    try await waitUntil("three ticks") { recorder.values.count >= 3 }
    recorder.cancel()
    let ticks = recorder.values
    #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $0 < $1 })
  }
}
