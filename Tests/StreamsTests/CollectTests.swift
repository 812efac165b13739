import Streams
import Testing

@Suite struct CollectTests {
  @Test func keepsThePublisherContract() {
    checkOperatorContract { $0.collect(3) }
    checkOperatorContract { $0.collect() }
  }

  @Test func collectByCountEmitsFullArraysThenTheRest() {
    let recorder = RecordingSubscriber<[Int], Never>()
    (1...7).publisher.collect(3).subscribe(recorder)
    #expect(recorder.values == [[1, 2, 3], [4, 5, 6], [7]])
    #expect(recorder.completions == [.finished])
  }

  @Test func collectByCountAsksUpstreamPerArray() {
    let recorder = RecordingSubscriber<[Int], Never>(initialDemand: .max(1))
    (1...7).publisher.collect(2).subscribe(recorder)
    #expect(recorder.values == [[1, 2]])
    recorder.request(.max(1))
    #expect(recorder.values == [[1, 2], [3, 4]])
  }

  @Test func collectAllEmitsOneArrayOnFinish() {
    let recorder = RecordingSubscriber<[Int], Never>(initialDemand: .max(1))
    (1...4).publisher.collect().subscribe(recorder)
    #expect(recorder.events == [.subscription, .value([1, 2, 3, 4]), .completion(.finished)])
  }

  @Test func failureDropsTheBuffer() {
    let subject = PassthroughSubject<Int, ContractError>()
    let recorder = RecordingSubscriber<[Int], ContractError>()
    subject.collect(3).subscribe(recorder)
    subject.send(1)
    subject.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
  }
}
