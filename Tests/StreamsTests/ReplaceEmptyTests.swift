import Streams
import Testing

@Suite struct ReplaceEmptyTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.replaceEmpty(with: -1) }
    checkOperatorContract { $0.filter { _ in false }.replaceEmpty(with: -1) }
  }

  @Test func publishesTheReplacementWhenUpstreamFinishesEmpty() {
    let recorder = RecordingSubscriber<Int, Never>()
    Empty<Int, Never>().replaceEmpty(with: 7).subscribe(recorder)
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }

  @Test func theReplacementWaitsForDemand() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    Empty<Int, Never>().replaceEmpty(with: 7).subscribe(recorder)
    #expect(recorder.events == [.subscription])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(7), .completion(.finished)])
  }

  @Test func aNonEmptyStreamIsUnchanged() {
    let recorder = RecordingSubscriber<Int, Never>()
    [1, 2].publisher.replaceEmpty(with: 7).subscribe(recorder)
    #expect(recorder.values == [1, 2])
  }

  @Test func aFailureIsForwarded() {
    let recorder = RecordingSubscriber<Int, ContractError>()
    Fail<Int, ContractError>(error: .boom).replaceEmpty(with: 7).subscribe(recorder)
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }
}
