import Dispatch
import Streams
import Synchronization
import TestSupport
import Testing

/// Records what scheduled actions did, and when, from any thread.
private final class Log: Sendable {
  private let entries = Mutex<[String]>([])
  func append(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

@Suite struct TestSchedulerTests {
  @Test func actionsRunOnlyWhenTheClockReachesThem() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let log = Log()
    scheduler.schedule(after: start.advanced(by: .seconds(2))) { log.append("2s") }
    scheduler.schedule(after: start.advanced(by: .seconds(1))) { log.append("1s") }

    scheduler.advance(by: .milliseconds(999))
    #expect(log.all == [])
    scheduler.advance(by: .milliseconds(1))
    #expect(log.all == ["1s"])
    #expect(start.distance(to: scheduler.now) == .seconds(1))
    scheduler.advance(by: .seconds(5))
    #expect(log.all == ["1s", "2s"])
    #expect(start.distance(to: scheduler.now) == .seconds(6))
  }

  @Test func actionsDueAtTheSameInstantRunInInsertionOrder() {
    let scheduler = TestScheduler()
    let due = scheduler.now.advanced(by: .seconds(1))
    let log = Log()
    for name in ["a", "b", "c", "d"] {
      scheduler.schedule(after: due) { log.append(name) }
    }
    scheduler.schedule { log.append("now") }
    scheduler.advance(by: .seconds(1))
    #expect(log.all == ["now", "a", "b", "c", "d"])
  }

  @Test func immediateActionsWaitForTheNextAdvance() {
    let scheduler = TestScheduler()
    let log = Log()
    scheduler.schedule { log.append("x") }
    #expect(log.all == [])
    scheduler.advance()
    #expect(log.all == ["x"])
  }

  @Test func theClockReadsEachActionsDueTimeWhileItRuns() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let log = Log()
    for ms in [300, 100, 200] {
      scheduler.schedule(after: start.advanced(by: .milliseconds(ms))) {
        log.append("\(ms)@\(start.distance(to: scheduler.now).magnitude / 1_000_000)")
      }
    }
    scheduler.advance(by: .seconds(1))
    #expect(log.all == ["100@100", "200@200", "300@300"])
  }

  @Test func actionsScheduledByActionsRunInTheSameAdvance() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let log = Log()
    scheduler.schedule(after: start.advanced(by: .seconds(1))) {
      log.append("outer")
      scheduler.schedule(after: scheduler.now.advanced(by: .seconds(1))) { log.append("inner") }
    }
    scheduler.advance(by: .seconds(2))
    #expect(log.all == ["outer", "inner"])
  }

  @Test func pastDatesRunOnTheNextAdvanceWithoutMovingTheClockBack() {
    let scheduler = TestScheduler()
    scheduler.advance(by: .seconds(10))
    let now = scheduler.now
    let log = Log()
    scheduler.schedule(after: now.advanced(by: .seconds(-5))) { log.append("late") }
    scheduler.advance()
    #expect(log.all == ["late"])
    #expect(scheduler.now == now)
  }

  @Test func repeatingActionsFireEveryIntervalUntilCancelled() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let log = Log()
    let cancellable = scheduler.schedule(
      after: start.advanced(by: .seconds(1)), interval: .seconds(1)
    ) {
      log.append("\(start.distance(to: scheduler.now).magnitude / 1_000_000_000)")
    }
    scheduler.advance(by: .milliseconds(3500))
    #expect(log.all == ["1", "2", "3"])
    cancellable.cancel()
    scheduler.advance(by: .seconds(10))
    #expect(log.all == ["1", "2", "3"])
  }

  @Test func runPerformsEveryOneShotActionAndReturnsDespiteRepeatingOnes() {
    let scheduler = TestScheduler()
    let start = scheduler.now
    let log = Log()
    let timer = scheduler.schedule(after: start, interval: .seconds(1)) { log.append("tick") }
    scheduler.schedule(after: start.advanced(by: .milliseconds(2500))) { log.append("done") }
    scheduler.run()
    #expect(log.all == ["tick", "tick", "tick", "done"])
    #expect(start.distance(to: scheduler.now) == .milliseconds(2500))
    timer.cancel()
  }

  @Test func schedulingFromManyThreadsLosesNothing() async {
    let scheduler = TestScheduler()
    let count = Atomic(0)
    await concurrentlyOnDedicatedThreads(iterations: 8) { thread in
      for index in 0..<500 {
        scheduler.schedule(after: scheduler.now.advanced(by: .milliseconds(index % 7))) {
          count.add(1, ordering: .relaxed)
        }
      }
      _ = thread
    }
    scheduler.advance(by: .seconds(1))
    #expect(count.load(ordering: .relaxed) == 4_000)
  }
}

/// Records a publisher's events stamped with a test scheduler's virtual time, in milliseconds
/// since the recorder was made: `"300ms 1"`, `"1000ms finished"`, `"1000ms failure"`.
final class Timeline: Sendable {
  private let scheduler: TestScheduler
  private let start: TestScheduler.SchedulerTimeType
  private let entries = Mutex<[String]>([])
  private let cancellable = Mutex<AnyCancellable?>(nil)

  init<P: Publisher>(_ publisher: P, on scheduler: TestScheduler) {
    self.scheduler = scheduler
    start = scheduler.now
    let subscription = publisher.sink(
      receiveCompletion: { [weak self] completion in
        switch completion {
        case .finished: self?.append("finished")
        case .failure: self?.append("failure")
        }
      },
      receiveValue: { [weak self] value in self?.append("\(value)") })
    cancellable.withLock { $0 = subscription }
  }

  /// Cancels the subscription.
  func cancel() { cancellable.withLock { $0 }?.cancel() }

  var events: [String] { entries.withLock { $0 } }

  private func append(_ event: String) {
    let ms = start.distance(to: scheduler.now).magnitude / 1_000_000
    entries.withLock { $0.append("\(ms)ms \(event)") }
  }
}
