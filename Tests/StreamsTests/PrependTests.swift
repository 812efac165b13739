import Streams
import Testing

@Suite struct PrependTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.prepend(-1, -2) }
    checkOperatorContract { $0.prepend(Just(-1).setFailureType(to: ContractError.self)) }
  }

  @Test func publishesTheElementsFirst() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.prepend(1, 2).subscribe(recorder)
    subject.send(3)
    #expect(recorder.values == [1, 2, 3])
  }

  @Test func carriesOutstandingDemandToTheSuffix() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(3))
    subject.prepend([1, 2]).subscribe(recorder)
    subject.send(3)
    subject.send(4)
    #expect(recorder.values == [1, 2, 3])
  }
}
