import Streams
import Testing

@Suite struct TimeoutTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  @Test func keepsThePublisherContract() {
    let scheduler = TestScheduler()
    checkOperatorContract { $0.timeout(.seconds(10), scheduler: scheduler) }
    checkOperatorContract(exactDemand: false, settle: { scheduler.advance(by: .seconds(1)) }) {
      $0.timeout(.milliseconds(500), scheduler: scheduler, customError: { .boom })
    }
  }

  @Test func finishesAfterSilenceAndCancelsUpstream() {
    let timeline = Timeline(subject.timeout(.seconds(1), scheduler: scheduler), on: scheduler)
    scheduler.advance(by: .milliseconds(600))
    subject.send(1)
    scheduler.advance(by: .milliseconds(600))
    subject.send(2)
    scheduler.advance(by: .milliseconds(999))
    #expect(timeline.events == ["600ms 1", "1200ms 2"])
    scheduler.advance(by: .milliseconds(1))
    #expect(timeline.events == ["600ms 1", "1200ms 2", "2200ms finished"])
    #expect(subject.subscriberCount == 0)
  }

  @Test func failsWithTheCustomError() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.timeout(.seconds(1), scheduler: scheduler, customError: { .boom }).subscribe(recorder)
    scheduler.advance(by: .seconds(1))
    #expect(recorder.completions == [.failure(.boom)])
  }

  @Test func anUpstreamCompletionStopsTheClock() {
    let timeline = Timeline(subject.timeout(.seconds(1), scheduler: scheduler), on: scheduler)
    subject.send(completion: .finished)
    scheduler.advance(by: .seconds(5))
    #expect(timeline.events == ["0ms finished"])
  }

  @Test func aCancelledStreamIsNotKeptAliveByItsTimer() {
    weak var weakRecorder: RecordingSubscriber<Int, ContractError>?
    do {
      let recorder = RecordingSubscriber<Int, ContractError>()
      weakRecorder = recorder
      subject.timeout(.seconds(60), scheduler: scheduler).subscribe(recorder)
      recorder.cancel()
    }
    #expect(weakRecorder == nil)
  }
}
