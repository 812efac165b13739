import Streams
import Testing

@Suite struct FilterTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.filter { $0.isMultiple(of: 2) } }
  }

  @Test func republishesMatchingValuesWithinDemand() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    (1...10).publisher.filter { $0.isMultiple(of: 3) }.subscribe(recorder)
    #expect(recorder.values == [3, 6])
    recorder.request(.unlimited)
    #expect(recorder.values == [3, 6, 9])
    #expect(recorder.completions == [.finished])
  }
}
