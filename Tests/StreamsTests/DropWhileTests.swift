import Streams
import Testing

@Suite struct DropWhileTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.drop { $0 < 5 } }
  }

  @Test func dropsOnlyTheLeadingMatches() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2, 5, 1, 7].publisher.drop { $0 < 3 }.subscribe(recorder)
    #expect(recorder.values == [5, 1, 7])
  }

  @Test func demandStaysExactWhileDropping() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    (0..<10).publisher.drop { $0 < 4 }.subscribe(recorder)
    #expect(recorder.values == [4, 5])
  }
}
