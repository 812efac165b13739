import Streams
import Testing

@Suite struct AnyPublisherTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.eraseToAnyPublisher() }
  }

  @Test func erasingTwiceDoesNotNest() {
    let subject = PassthroughSubject<Int, Never>()
    let erased = subject.eraseToAnyPublisher().eraseToAnyPublisher()
    let recorder = RecordingSubscriber<Int, Never>()
    erased.subscribe(recorder)
    subject.send(1)
    #expect(recorder.values == [1])
  }
}
