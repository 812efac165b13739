import Streams
import Testing

@Suite struct MeasureIntervalTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.measureInterval(using: TestScheduler()) }
  }

  @Test func publishesTheTimeBetweenElements() {
    let scheduler = TestScheduler()
    let subject = PassthroughSubject<String, Never>()
    let recorder = RecordingSubscriber<TestScheduler.SchedulerTimeType.Stride, Never>()
    subject.measureInterval(using: scheduler).subscribe(recorder)
    scheduler.advance(by: .milliseconds(250))
    subject.send("a")
    scheduler.advance(by: .seconds(2))
    subject.send("b")
    subject.send("c")
    #expect(recorder.values == [.milliseconds(250), .seconds(2), .zero])
  }
}
