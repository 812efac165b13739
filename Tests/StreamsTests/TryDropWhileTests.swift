import Streams
import Testing

@Suite struct TryDropWhileTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.tryDrop { $0 < 5 } }
  }

  @Test func dropsTheLeadingMatchesAndFailsWhenThePredicateThrows() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, any Error>()
    subject.tryDrop { value in
      if value == 9 { throw ContractError.boom }
      return value < 3
    }.subscribe(recorder)
    [1, 2, 5, 1].forEach(subject.send)
    #expect(recorder.values == [5, 1])
    subject.send(9)  // no longer dropping: the predicate is not asked again
    #expect(recorder.values == [5, 1, 9])
    #expect(recorder.completions.isEmpty)
  }

  @Test func aThrowWhileDroppingFailsTheStream() {
    let recorder = RecordingSubscriber<Int, any Error>()
    [1, 2, 3].publisher.tryDrop { _ in throw ContractError.boom }.subscribe(recorder)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
  }
}
