import Streams
import Testing

@Suite struct RemoveDuplicatesTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.removeDuplicates() }
    checkOperatorContract { $0.removeDuplicates { $0 / 2 == $1 / 2 } }
  }

  @Test func dropsConsecutiveDuplicatesOnly() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 1, 2, 2, 2, 1, 3, 3].publisher.removeDuplicates().subscribe(recorder)
    #expect(recorder.values == [1, 2, 1, 3])
  }

  @Test func usesThePredicate() {
    let recorder = RecordingSubscriber<String, Never>()
    ["a", "A", "b", "B", "a"].publisher.removeDuplicates { $0.lowercased() == $1.lowercased() }
      .subscribe(recorder)
    #expect(recorder.values == ["a", "b", "a"])
  }
}
