import Streams
import Testing

@Suite struct DropFirstTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.dropFirst(5) }
  }

  @Test func dropsTheFirstValuesAndCountsDemandOnTheRest() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    (1...10).publisher.dropFirst(3).subscribe(recorder)
    #expect(recorder.values == [4, 5])
    recorder.request(.unlimited)
    #expect(recorder.values == Array(4...10))
  }

  @Test func defaultDropsOne() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2].publisher.dropFirst().subscribe(recorder)
    #expect(recorder.values == [2])
  }
}
