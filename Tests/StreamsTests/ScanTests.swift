import Streams
import Testing

@Suite struct ScanTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.scan(0, +) }
  }

  @Test func publishesEveryPartialResult() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2, 3, 4].publisher.scan(10, +).subscribe(recorder)
    #expect(recorder.values == [11, 13, 16, 20])
  }

  @Test func eachSubscriptionStartsFromTheInitialResult() {
    let scanned = [1, 2].publisher.scan(0, +)
    let first = RecordingSubscriber<Int, Never>()
    let second = RecordingSubscriber<Int, Never>()
    scanned.subscribe(first)
    scanned.subscribe(second)
    #expect(first.values == [1, 3])
    #expect(second.values == [1, 3])
  }
}
