import Streams
import Testing

@Suite struct ThrottleTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  /// Moves the clock to `ms` milliseconds after `start` and sends `value`.
  func send(_ value: Int, at ms: Int, since start: TestScheduler.SchedulerTimeType) {
    scheduler.advance(to: start.advanced(by: .milliseconds(ms)))
    subject.send(value)
  }

  /// Sends 1 at 0ms, 2 at 100ms, 3 at 200ms, 4 at 1500ms, 5 at 1600ms, 6 at 1700ms, then
  /// runs the clock to 5s, with a one-second throttle.
  func run(latest: Bool) -> [String] {
    let start = scheduler.now
    let timeline = Timeline(
      subject.throttle(for: .seconds(1), scheduler: scheduler, latest: latest), on: scheduler)
    for (value, ms) in [(1, 0), (2, 100), (3, 200), (4, 1500), (5, 1600), (6, 1700)] {
      send(value, at: ms, since: start)
    }
    scheduler.advance(to: start.advanced(by: .seconds(5)))
    return timeline.events
  }

  @Test func latestTrueDeliversTheFirstValueAtOnceThenTheNewestPerInterval() {
    // 1 at once; 2 and 3 wait for the interval to end at 1000ms, and 3 is the newer; 4 comes
    // only 500ms after that publication, so it waits until 2000ms, when 6 is the newest.
    #expect(run(latest: true) == ["0ms 1", "1000ms 3", "2000ms 6"])
  }

  @Test func latestFalseDeliversTheFirstValueOfEachInterval() {
    #expect(run(latest: false) == ["0ms 1", "1000ms 2", "2000ms 4"])
  }

  @Test func aValueAfterAQuietIntervalIsDeliveredAtOnce() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.throttle(for: .seconds(1), scheduler: scheduler, latest: true), on: scheduler)
    send(1, at: 0, since: start)
    send(2, at: 3000, since: start)
    scheduler.advance()
    #expect(timeline.events == ["0ms 1", "3000ms 2"])
  }

  @Test func completionWaitsForTheHeldValue() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.throttle(for: .seconds(1), scheduler: scheduler, latest: true), on: scheduler)
    send(1, at: 0, since: start)
    send(2, at: 300, since: start)
    subject.send(completion: .finished)
    scheduler.advance(to: start.advanced(by: .seconds(3)))
    #expect(timeline.events == ["0ms 1", "1000ms 2", "1000ms finished"])
  }

  @Test func failureWithNothingHeldIsDeliveredAtOnce() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.throttle(for: .seconds(1), scheduler: scheduler, latest: false), on: scheduler)
    send(1, at: 0, since: start)
    scheduler.advance(to: start.advanced(by: .milliseconds(200)))
    subject.send(completion: .failure(.boom))
    scheduler.advance()
    #expect(timeline.events == ["0ms 1", "200ms failure"])
  }

  @Test func cancelDropsTheHeldValue() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.throttle(for: .seconds(1), scheduler: scheduler, latest: true), on: scheduler)
    send(1, at: 0, since: start)
    send(2, at: 300, since: start)
    timeline.cancel()
    scheduler.advance(by: .seconds(3))
    #expect(timeline.events == ["0ms 1"])
    #expect(subject.subscriberCount == 0)
  }

  @Test func valuesArrivingWithoutDemandAreDropped() {
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .max(1))
    subject.throttle(for: .seconds(1), scheduler: scheduler, latest: true).subscribe(recorder)
    subject.send(1)
    scheduler.advance()
    scheduler.advance(by: .seconds(2))
    subject.send(2)
    scheduler.advance(by: .seconds(2))
    recorder.request(.max(1))
    subject.send(3)
    scheduler.advance(by: .seconds(2))
    #expect(recorder.values == [1, 3])
  }

  @Test(arguments: [true, false]) func keepsThePublisherContract(latest: Bool) {
    // Each input arrives one interval after the previous one, so every input gets through
    // and the contract can count demand exactly.
    let scheduler = TestScheduler()
    checkContract {
      let upstream = PassthroughSubject<Int, ContractError>()
      let operatorUnderTest = { (source: PassthroughSubject<Int, ContractError>) in
        source.throttle(for: .milliseconds(10), scheduler: scheduler, latest: latest)
      }
      return ContractRig(
        publisher: operatorUnderTest(upstream),
        send: { value in
          scheduler.advance(by: .milliseconds(10))
          upstream.send(value)
        },
        finish: { upstream.send(completion: .finished) },
        fail: { upstream.send(completion: .failure(.boom)) },
        settle: { scheduler.advance(by: .seconds(1)) })
    }
  }
}
