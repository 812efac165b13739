import Streams
import Testing

@Suite struct ReduceTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.reduce(0, +) }
    checkOperatorContract { $0.tryReduce(0, +) }
  }

  @Test func publishesTheFinalResultWhenUpstreamFinishes() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, Never>()
    subject.reduce(10, +).subscribe(recorder)
    [1, 2, 3].forEach(subject.send)
    #expect(recorder.values == [])
    subject.send(completion: .finished)
    #expect(recorder.events == [.subscription, .value(16), .completion(.finished)])
  }

  @Test func theResultWaitsForDemand() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .none)
    [1, 2, 3].publisher.reduce(0, +).subscribe(recorder)
    #expect(recorder.events == [.subscription])
    recorder.request(.max(1))
    #expect(recorder.events == [.subscription, .value(6), .completion(.finished)])
  }

  @Test func aFailureDropsThePartialResult() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<Int, ContractError>()
    subject.reduce(0, +).subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }

  @Test func tryReduceFailsWithTheThrownErrorAndCancelsUpstream() {
    let subject = PassthroughSubject<Int, Never>()
    let recorder = RecordingSubscriber<Int, any Error>()
    subject.tryReduce(0) { sum, value in
      if value == 2 { throw ContractError.boom }
      return sum + value
    }.subscribe(recorder)
    [1, 2, 3].forEach(subject.send)
    #expect(recorder.values == [])
    #expect(recorder.completions.count == 1)
    if case .failure(let error)? = recorder.completions.first {
      #expect(error as? ContractError == .boom)
    }
    #expect(subject.subscriberCount == 0)
  }
}
