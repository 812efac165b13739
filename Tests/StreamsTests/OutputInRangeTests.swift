import Streams
import Testing

@Suite struct OutputInRangeTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.output(at: 2) }
    checkOperatorContract { $0.output(in: 2..<30) }
    checkOperatorContract { $0.output(in: 5...) }
    checkOperatorContract { $0.output(in: 3..<3) }
  }

  @Test func publishesTheElementAtAnIndexThenFinishes() {
    let subject = PassthroughSubject<String, Never>()
    let recorder = RecordingSubscriber<String, Never>()
    subject.output(at: 1).subscribe(recorder)
    ["a", "b", "c"].forEach(subject.send)
    #expect(recorder.events == [.subscription, .value("b"), .completion(.finished)])
    #expect(subject.subscriberCount == 0)
  }

  @Test func publishesTheElementsInARange() {
    let closed = RecordingSubscriber<Int, Never>()
    let through = RecordingSubscriber<Int, Never>()
    (0..<10).publisher.output(in: 3...5).subscribe(closed)
    (0..<10).publisher.output(in: ...1).subscribe(through)
    #expect(closed.values == [3, 4, 5])
    #expect(through.values == [0, 1])
  }

  @Test func demandStaysExactWhileSkipping() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
    (0..<10).publisher.output(in: 4..<8).subscribe(recorder)
    #expect(recorder.values == [4])
    recorder.request(.max(5))
    #expect(recorder.events.last == .completion(.finished))
    #expect(recorder.values == [4, 5, 6, 7])
  }
}
