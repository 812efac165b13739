import Streams
import Testing

@Suite struct PrefixWhileTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.prefix { $0 < 30 } }
    checkOperatorContract { $0.prefix { $0 < 3 } }
  }

  @Test func finishesAtTheFirstMismatchAndCancelsUpstream() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.prefix { $0 < 3 }.subscribe(recorder)
    [1, 2, 3, 1].forEach(subject.send)
    #expect(recorder.events == [.subscription, .value(1), .value(2), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }
}
