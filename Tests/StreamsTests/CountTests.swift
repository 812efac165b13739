import Streams
import Testing

@Suite struct CountTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.count() }
  }

  @Test func countsTheElements() {
    let recorder = RecordingSubscriber<Int, Never>()
    (1...7).publisher.count().subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }

  @Test func anEmptyStreamCountsZero() {
    let recorder = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().count().subscribe(recorder)
    #expect(recorder.values == [0])
  }
}
