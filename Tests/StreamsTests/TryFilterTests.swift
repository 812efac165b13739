import Streams
import Testing

@Suite struct TryFilterTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.tryFilter { $0.isMultiple(of: 2) } }
  }

  @Test func filtersAndFailsWhenThePredicateThrows() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, any Error>()
    subject.tryFilter { value in
      if value == 5 { throw ContractError.boom }
      return value.isMultiple(of: 2)
    }.subscribe(recorder)
    (1...6).forEach(subject.send)
    #expect(recorder.values == [2, 4])
    #expect(recorder.completions.count == 1)
    #expect(subject.subscriberCount == 0)
  }
}
