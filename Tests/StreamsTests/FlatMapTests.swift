import Streams
import Synchronization
import Testing

@Suite struct FlatMapTests {
  let upstream = PassthroughSubject<Int, ContractError>()
  /// One inner subject per upstream value, created on demand by the transform.
  let inners = Inners()

  final class Inners: Sendable {
    private let subjects = Mutex<[Int: PassthroughSubject<String, ContractError>]>([:])
    subscript(key: Int) -> PassthroughSubject<String, ContractError> {
      subjects.withLock { subjects in
        if let subject = subjects[key] { return subject }
        let subject = PassthroughSubject<String, ContractError>()
        subjects[key] = subject
        return subject
      }
    }
  }

  func record(
    maxPublishers: Subscribers.Demand = .unlimited
  ) -> RecordingSubscriber<
    String, ContractError
  > {
    let recorder = RecordingSubscriber<String, ContractError>()
    let inners = inners
    upstream.flatMap(maxPublishers: maxPublishers) { inners[$0] }.subscribe(recorder)
    return recorder
  }

  @Test func mergesTheValuesOfEveryInnerPublisher() {
    let recorder = record()
    upstream.send(1)
    upstream.send(2)
    inners[1].send("1a")
    inners[2].send("2a")
    inners[1].send("1b")
    #expect(recorder.values == ["1a", "2a", "1b"])
  }

  @Test func maxPublishersLimitsLiveInnersAndRequestsMoreAsTheyFinish() {
    let recorder = record(maxPublishers: .max(1))
    upstream.send(1)
    upstream.send(2)  // not requested yet: dropped by the subject
    #expect(inners[2].subscriberCount == 0)
    inners[1].send("1a")
    inners[1].send(completion: .finished)
    upstream.send(3)
    inners[3].send("3a")
    #expect(recorder.values == ["1a", "3a"])
    #expect(inners[2].subscriberCount == 0)
  }

  @Test func finishesWhenTheUpstreamAndEveryInnerHaveFinished() {
    let recorder = record()
    upstream.send(1)
    upstream.send(completion: .finished)
    inners[1].send("1a")
    #expect(recorder.completions.isEmpty)
    inners[1].send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func anInnerFailureIsForwardedAndCancelsEverythingElse() {
    let recorder = record()
    upstream.send(1)
    upstream.send(2)
    inners[2].send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(upstream.subscriberCount == 0)
    #expect(inners[1].subscriberCount == 0)
  }

  @Test func anUpstreamFailureIsForwardedAndCancelsTheInners() {
    let recorder = record()
    upstream.send(1)
    upstream.send(completion: .failure(.boom))
    #expect(recorder.events == [.subscription, .completion(.failure(.boom))])
    #expect(inners[1].subscriberCount == 0)
  }

  @Test func cancelCancelsTheUpstreamAndEveryInner() {
    let recorder = record()
    upstream.send(1)
    upstream.send(2)
    recorder.cancel()
    #expect(upstream.subscriberCount == 0)
    #expect(inners[1].subscriberCount == 0 && inners[2].subscriberCount == 0)
  }

  @Test func valuesBeyondDemandWaitInOrder() {
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    [1, 2].publisher.flatMap { [$0 * 10, $0 * 10 + 1].publisher }.subscribe(recorder)
    #expect(recorder.values.count == 2)
    recorder.request(.unlimited)
    #expect(recorder.values.sorted() == [10, 11, 20, 21])
    #expect(recorder.completions.count == 1)
  }

  @Test func keepsThePublisherContract() {
    checkOperatorContract { upstream in
      upstream.flatMap { Just($0).setFailureType(to: ContractError.self) }
    }
  }
}
