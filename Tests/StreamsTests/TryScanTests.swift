import Streams
import Testing

@Suite struct TryScanTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.tryScan(0, +) }
  }

  @Test func publishesPartialResultsUntilTheClosureThrows() {
    let recorder = RecordingSubscriber<Int, any Error>()
    [1, 2, 3, 4].publisher.tryScan(0) { sum, value in
      if value == 3 { throw ContractError.boom }
      return sum + value
    }.subscribe(recorder)
    #expect(recorder.values == [1, 3])
    #expect(recorder.completions.count == 1)
  }

  @Test func eachSubscriptionStartsFromTheInitialResult() {
    let scanned = [1, 2].publisher.tryScan(0, +)
    let first = RecordingSubscriber<Int, any Error>()
    let second = RecordingSubscriber<Int, any Error>()
    scanned.subscribe(first)
    scanned.subscribe(second)
    #expect(first.values == [1, 3])
    #expect(second.values == [1, 3])
  }
}
