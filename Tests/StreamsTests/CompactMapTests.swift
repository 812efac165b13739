import Streams
import Testing

@Suite struct CompactMapTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.compactMap { $0 % 3 == 0 ? nil : $0 } }
  }

  @Test func dropsNilsAndKeepsDemandExact() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    ["1", "x", "2", "3"].publisher.compactMap { Int($0) }.subscribe(recorder)
    #expect(recorder.values == [1, 2])
    recorder.request(.max(1))
    #expect(recorder.events.last == .completion(.finished))
    #expect(recorder.values == [1, 2, 3])
  }
}
