import Streams
import Testing

@Suite struct EmptyTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Empty<Int, ContractError>()) }
    checkContract { ContractRig(publisher: Empty<Int, Never>(completeImmediately: false)) }
  }

  @Test func finishesAtOnceOrNever() {
    let finishing = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().subscribe(finishing)
    #expect(finishing.events == [.subscription, .completion(.finished)])
    let silent = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>(completeImmediately: false).subscribe(silent)
    #expect(silent.events == [.subscription])
  }
}
