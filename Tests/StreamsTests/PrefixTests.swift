import Streams
import Testing

@Suite struct PrefixTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.prefix(4) }
    checkOperatorContract { $0.prefix(0) }
  }

  @Test func finishesAfterTheCountAndCancelsUpstream() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.prefix(2).subscribe(recorder)
    (1...4).forEach(subject.send)
    #expect(recorder.events == [.subscription, .value(1), .value(2), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }

  @Test func prefixOfZeroFinishesAtOnce() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2].publisher.prefix(0).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }
}
