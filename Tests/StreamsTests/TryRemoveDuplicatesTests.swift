import Streams
import Testing

@Suite struct TryRemoveDuplicatesTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.map { $0 / 2 }.tryRemoveDuplicates { $0 == $1 } }
  }

  @Test func dropsConsecutiveDuplicatesAndFailsWhenTheComparisonThrows() {
    let recorder = RecordingSubscriber<Int, any Error>()
    [1, 1, 2, 2, 3, 4].publisher.tryRemoveDuplicates { previous, next in
      if next == 4 { throw ContractError.boom }
      return previous == next
    }.subscribe(recorder)
    #expect(recorder.values == [1, 2, 3])
    #expect(recorder.completions.count == 1)
  }
}
