import Streams
import Testing

@Suite struct PrintTests {
  /// A text stream that keeps what it was given.
  final class Lines: TextOutputStream, @unchecked Sendable {
    // @unchecked: no lock; the tests below write from one thread and read afterwards.
    var text = ""
    func write(_ string: String) { text += string }
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.print("contract", to: Lines()) }
  }

  @Test func logsEveryEventWithThePrefix() {
    let lines = Lines()
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    subject.print("numbers", to: lines).subscribe(recorder)
    subject.send(1)
    recorder.request(.unlimited)
    subject.send(completion: .finished)
    let logged = lines.text.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(logged.first?.hasPrefix("numbers: receive subscription: (") == true)
    #expect(
      logged.dropFirst().joined(separator: "\n") == """
        numbers: request max: (2)
        numbers: receive value: (1)
        numbers: request unlimited
        numbers: receive finished

        """)
    #expect(recorder.values == [1])
  }

  @Test func logsErrorsAndCancelWithoutAPrefix() {
    let lines = Lines()
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.print(to: lines).subscribe(recorder)
    recorder.cancel()
    let failing = Fail<Int, ContractError>(error: .boom).print(to: lines)
    failing.subscribe(RecordingSubscriber<Int, ContractError>())
    #expect(lines.text.contains("\nreceive cancel\n"))
    #expect(lines.text.hasSuffix("receive error: (boom)\n"))
  }
}
