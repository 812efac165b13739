import Streams
import Testing

@Suite struct FirstTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.first() }
    checkOperatorContract { $0.first { $0 > 25 } }
  }

  @Test func firstPublishesOneValueThenFinishes() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.first().subscribe(recorder)
    subject.send(7)
    subject.send(8)
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }

  @Test func firstWhereSkipsToTheMatch() {
    let recorder = RecordingSubscriber<Int, Never>()
    (1...10).publisher.first { $0.isMultiple(of: 4) }.subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(4), .completion(.finished)])
  }

  @Test func firstOfAnEmptyStreamJustFinishes() {
    let recorder = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().first().subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }
}
