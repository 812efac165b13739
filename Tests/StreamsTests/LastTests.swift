import Streams
import Testing

@Suite struct LastTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.last() }
    checkOperatorContract { $0.last { $0.isMultiple(of: 2) } }
    checkOperatorContract { $0.tryLast { $0 > 3 } }
  }

  @Test func publishesTheLastElement() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2, 3].publisher.last().subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(3), .completion(.finished)])
  }

  @Test func publishesTheLastMatchingElement() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2, 3, 4, 5].publisher.last { $0.isMultiple(of: 2) }.subscribe(recorder)
    #expect(recorder.values == [4])
  }

  @Test func anEmptyStreamFinishesWithoutAValue() {
    let recorder = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().last().subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.finished)])
  }

  @Test func tryLastFailsWhenThePredicateThrows() {
    let recorder = RecordingSubscriber<Int, any Error>()
    [1, 2, 3].publisher.tryLast { value in
      if value == 3 { throw ContractError.boom }
      return true
    }.subscribe(recorder)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
  }
}
