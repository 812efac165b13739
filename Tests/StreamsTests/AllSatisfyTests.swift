import Streams
import Testing

@Suite struct AllSatisfyTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.allSatisfy { $0 < 1_000 } }
    checkOperatorContract { $0.allSatisfy { $0 < 2 } }
    checkOperatorContract { $0.tryAllSatisfy { $0 < 1_000 } }
  }

  @Test func publishesFalseAtTheFirstMismatchAndCancelsUpstream() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Bool, Never>()
    subject.allSatisfy { $0 < 3 }.subscribe(recorder)
    subject.send(1)
    subject.send(5)
    #expect(recorder.events == [.subscription, .value(false), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }

  @Test func publishesTrueWhenEveryElementMatches() {
    let recorder = RecordingSubscriber<Bool, Never>()
    [2, 4].publisher.allSatisfy { $0.isMultiple(of: 2) }.subscribe(recorder)
    #expect(recorder.values == [true])
  }

  @Test func tryAllSatisfyFailsWhenThePredicateThrows() {
    let recorder = RecordingSubscriber<Bool, any Error>()
    [1].publisher.tryAllSatisfy { _ in throw ContractError.boom }.subscribe(recorder)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
  }
}
