import Streams
import Testing

@Suite struct DebounceTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  /// Sends `value` after moving the clock to `ms` milliseconds since the test began.
  func send(_ value: Int, at ms: Int, since start: TestScheduler.SchedulerTimeType) {
    scheduler.advance(to: start.advanced(by: .milliseconds(ms)))
    subject.send(value)
  }

  @Test func deliversTheLastValueAfterAQuietPeriod() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.debounce(for: .milliseconds(300), scheduler: scheduler), on: scheduler)
    send(1, at: 0, since: start)
    send(2, at: 100, since: start)
    send(3, at: 250, since: start)  // quiet until 550
    send(4, at: 600, since: start)
    send(5, at: 899, since: start)  // 4 was never quiet for 300ms
    scheduler.advance(to: start.advanced(by: .seconds(2)))
    #expect(timeline.events == ["550ms 3", "1199ms 5"])
  }

  @Test func aValueExactlyAtTheDueTimeIsDelivered() {
    let start = scheduler.now
    let timeline = Timeline(subject.debounce(for: .seconds(1), scheduler: scheduler), on: scheduler)
    subject.send(7)
    scheduler.advance(by: .milliseconds(999))
    #expect(timeline.events == [])
    scheduler.advance(by: .milliseconds(1))
    #expect(timeline.events == ["1000ms 7"])
    _ = start
  }

  @Test func completionIsDeliveredAtOnceAndDropsAPendingValue() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.debounce(for: .milliseconds(300), scheduler: scheduler), on: scheduler)
    send(1, at: 0, since: start)
    send(2, at: 400, since: start)
    scheduler.advance(to: start.advanced(by: .milliseconds(500)))
    subject.send(completion: .finished)
    scheduler.advance(by: .seconds(1))
    #expect(timeline.events == ["300ms 1", "500ms finished"])
  }

  @Test func failureIsForwarded() {
    let timeline = Timeline(
      subject.debounce(for: .milliseconds(300), scheduler: scheduler), on: scheduler)
    subject.send(1)
    scheduler.advance(by: .milliseconds(100))
    subject.send(completion: .failure(.boom))
    scheduler.advance(by: .seconds(1))
    #expect(timeline.events == ["100ms failure"])
  }

  @Test func cancelStopsAPendingValue() {
    let timeline = Timeline(
      subject.debounce(for: .milliseconds(300), scheduler: scheduler), on: scheduler)
    subject.send(1)
    timeline.cancel()
    scheduler.advance(by: .seconds(1))
    #expect(timeline.events == [])
    #expect(subject.subscriberCount == 0)
  }

  @Test func aValueDueWithoutDemandIsDropped() {
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .none)
    subject.debounce(for: .milliseconds(300), scheduler: scheduler).subscribe(recorder)
    subject.send(1)
    scheduler.advance(by: .seconds(1))
    recorder.request(.max(1))
    subject.send(2)
    scheduler.advance(by: .seconds(1))
    #expect(recorder.values == [2])
  }

  @Test func keepsThePublisherContract() {
    // Each input arrives one interval after the previous one, so every input gets through
    // and the contract can count demand exactly.
    let scheduler = TestScheduler()
    checkContract {
      let upstream = PassthroughSubject<Int, ContractError>()
      let operatorUnderTest = { (source: PassthroughSubject<Int, ContractError>) in
        source.debounce(for: .milliseconds(10), scheduler: scheduler)
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
