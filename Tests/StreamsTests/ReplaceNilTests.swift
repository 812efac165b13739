import Streams
import Testing

@Suite struct ReplaceNilTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.map { $0 == 3 ? nil : $0 }.replaceNil(with: -1) }
  }

  @Test func replacesNilElements() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, nil, 3].publisher.replaceNil(with: 0).subscribe(recorder)
    #expect(recorder.values == [1, 0, 3])
  }
}
