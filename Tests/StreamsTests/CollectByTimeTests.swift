import Streams
import Testing

@Suite struct CollectByTimeTests {
  let scheduler = TestScheduler()
  let subject = PassthroughSubject<Int, ContractError>()

  @Test func keepsThePublisherContract() {
    let scheduler = TestScheduler()
    checkOperatorContract(exactDemand: false, settle: { scheduler.advance(by: .seconds(1)) }) {
      $0.collect(.byTime(scheduler, .milliseconds(100)))
    }
    checkOperatorContract(exactDemand: false, settle: { scheduler.advance(by: .seconds(1)) }) {
      $0.collect(.byTimeOrCount(scheduler, .milliseconds(100), 3))
    }
  }

  @Test func publishesWhatArrivedInEachInterval() {
    let timeline = Timeline(
      subject.collect(.byTime(scheduler, .seconds(1))), on: scheduler)
    subject.send(1)
    subject.send(2)
    scheduler.advance(by: .seconds(1))
    scheduler.advance(by: .seconds(1))  // an empty interval publishes nothing
    subject.send(3)
    scheduler.advance(by: .milliseconds(500))
    subject.send(completion: .finished)
    #expect(timeline.events == ["1000ms [1, 2]", "2500ms [3]", "2500ms finished"])
  }

  @Test func aFullGroupIsPublishedBeforeTheTick() {
    let timeline = Timeline(
      subject.collect(.byTimeOrCount(scheduler, .seconds(1), 2)), on: scheduler)
    (1...5).forEach(subject.send)
    scheduler.advance(by: .seconds(1))
    #expect(timeline.events == ["0ms [1, 2]", "0ms [3, 4]", "1000ms [5]"])
  }

  @Test func groupsWaitForDemandInOrder() {
    let recorder = RecordingSubscriber<[Int], ContractError>(initialDemand: .none)
    subject.collect(.byTime(scheduler, .seconds(1))).subscribe(recorder)
    subject.send(1)
    scheduler.advance(by: .seconds(1))
    subject.send(2)
    scheduler.advance(by: .seconds(1))
    #expect(recorder.values == [])
    recorder.request(.max(1))
    #expect(recorder.values == [[1]])
    recorder.request(.max(1))
    #expect(recorder.values == [[1], [2]])
  }

  @Test func aFailureDropsWhatIsHeld() {
    let timeline = Timeline(subject.collect(.byTime(scheduler, .seconds(1))), on: scheduler)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    scheduler.advance(by: .seconds(2))
    #expect(timeline.events == ["0ms failure"])
  }

  @Test func cancelStopsTheTimer() {
    let timeline = Timeline(subject.collect(.byTime(scheduler, .seconds(1))), on: scheduler)
    subject.send(1)
    timeline.cancel()
    scheduler.advance(by: .seconds(2))
    #expect(timeline.events == [])
    #expect(subject.subscriberCount == 0)
  }
}
