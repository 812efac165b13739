import Streams
import Testing

@Suite struct ContainsTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.contains(3) }
    checkOperatorContract { $0.contains(1_000) }
    checkOperatorContract { $0.contains { $0 > 30 } }
    checkOperatorContract { $0.tryContains { $0 > 30 } }
  }

  @Test func findsAMatchAndCancelsUpstreamAtOnce() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Bool, Never>()
    subject.contains(2).subscribe(recorder)
    subject.send(1)
    #expect(recorder.values == [])
    subject.send(2)
    #expect(recorder.events == [.subscription, .value(true), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }

  @Test func publishesFalseWhenUpstreamFinishesWithoutAMatch() {
    let recorder = RecordingSubscriber<Bool, Never>()
    [1, 2, 3].publisher.contains { $0 > 5 }.subscribe(recorder)
    #expect(recorder.values == [false])
  }

  @Test func tryContainsFailsWhenThePredicateThrows() {
    let recorder = RecordingSubscriber<Bool, any Error>()
    [1, 2].publisher.tryContains { _ in throw ContractError.boom }.subscribe(recorder)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
  }
}
