import Streams
import Testing

@Suite struct DelayTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  @Test func shiftsEveryValueAndTheCompletionByTheInterval() {
    let start = scheduler.now
    let timeline = Timeline(
      subject.delay(for: .milliseconds(500), scheduler: scheduler), on: scheduler)
    subject.send(1)
    scheduler.advance(to: start.advanced(by: .milliseconds(100)))
    subject.send(2)
    subject.send(3)
    scheduler.advance(to: start.advanced(by: .milliseconds(499)))
    #expect(timeline.events == [])
    scheduler.advance(to: start.advanced(by: .milliseconds(700)))
    subject.send(completion: .finished)
    scheduler.advance(to: start.advanced(by: .seconds(5)))
    #expect(timeline.events == ["500ms 1", "600ms 2", "600ms 3", "1200ms finished"])
  }

  @Test func failureIsDelayedBehindTheValues() {
    let timeline = Timeline(subject.delay(for: .seconds(1), scheduler: scheduler), on: scheduler)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    scheduler.advance(by: .seconds(1))
    #expect(timeline.events == ["1000ms 1", "1000ms failure"])
  }

  @Test func cancelDropsValuesInFlight() {
    let timeline = Timeline(subject.delay(for: .seconds(1), scheduler: scheduler), on: scheduler)
    subject.send(1)
    timeline.cancel()
    scheduler.advance(by: .seconds(2))
    #expect(timeline.events == [])
    #expect(subject.subscriberCount == 0)
  }

  @Test func demandGoesUpstreamUnchanged() {
    let recorder = RecordingSubscriber<Int, ContractError>(initialDemand: .max(2))
    subject.delay(for: .seconds(1), scheduler: scheduler).subscribe(recorder)
    (1...5).forEach(subject.send)
    scheduler.advance(by: .seconds(1))
    #expect(recorder.values == [1, 2])
  }

  @Test func keepsThePublisherContract() {
    let scheduler = TestScheduler()
    checkOperatorContract(settle: { scheduler.advance(by: .seconds(1)) }) {
      $0.delay(for: .milliseconds(10), scheduler: scheduler)
    }
  }
}
