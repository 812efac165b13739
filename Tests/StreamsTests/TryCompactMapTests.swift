import Streams
import Testing

@Suite struct TryCompactMapTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.tryCompactMap { $0.isMultiple(of: 3) ? nil : $0 * 2 } }
  }

  @Test func dropsNilAndFailsWhenTheTransformThrows() {
    let subject = PassthroughSubject<String, Never>()
    let recorder = RecordingSubscriber<Int, any Error>()
    subject.tryCompactMap { text -> Int? in
      if text == "stop" { throw ContractError.boom }
      return Int(text)
    }.subscribe(recorder)
    ["1", "x", "3", "stop", "4"].forEach(subject.send)
    #expect(recorder.values == [1, 3])
    #expect(recorder.completions.count == 1)
  }
}
