import Streams
import Synchronization
import Testing

@Suite struct FlatMapTests {
  let upstream = PassthroughSubject<Int, ContractError>()
  /// One inner subject per upstream value, created on demand by the transform.
  let inners = Inners<ContractError>()

  final class Inners<Failure: Error>: Sendable {
    private let subjects = Mutex<[Int: PassthroughSubject<String, Failure>]>([:])
    subscript(key: Int) -> PassthroughSubject<String, Failure> {
      subjects.withLock { subjects in
        if let subject = subjects[key] { return subject }
        let subject = PassthroughSubject<String, Failure>()
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

  @Test func anInnerThatFinishesBeforeOlderAndNewerOnesLeavesThemAttached() {
    let recorder = record()
    for key in 1...4 { upstream.send(key) }
    inners[2].send(completion: .finished)
    inners[1].send(completion: .finished)
    inners[3].send("3a")
    inners[4].send("4a")
    upstream.send(completion: .finished)
    #expect(recorder.completions.isEmpty)
    inners[4].send(completion: .finished)
    #expect(recorder.completions.isEmpty)
    inners[3].send("3b")
    inners[3].send(completion: .finished)
    #expect(
      recorder.events == [
        .subscription, .value("3a"), .value("4a"), .value("3b"), .completion(.finished),
      ])
  }

  @Test func cancelAfterAMiddleInnerFinishedCancelsTheOthers() {
    let recorder = record()
    for key in 1...3 { upstream.send(key) }
    inners[2].send(completion: .finished)
    recorder.cancel()
    #expect(inners[1].subscriberCount == 0 && inners[3].subscriberCount == 0)
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

  /// An inner publisher that fails for a negative value and republishes any other value.
  static func justOrFail(_ value: Int) -> AnyPublisher<Int, ContractError> {
    value < 0
      ? Fail(error: .boom).eraseToAnyPublisher()
      : Just(value).setFailureType(to: ContractError.self).eraseToAnyPublisher()
  }

  // MARK: An upstream that cannot fail, inner publishers that can

  @Test func aNeverFailingUpstreamTakesTheInnerFailureTypeAndMergesInOrder() {
    let upstream = PassthroughSubject<Int, Never>()
    let inners = Inners<ContractError>()
    let flattened:
      Publishers.FlatMap<
        PassthroughSubject<String, ContractError>,
        Publishers.SetFailureType<PassthroughSubject<Int, Never>, ContractError>
      > = upstream.flatMap { inners[$0] }
    let recorder = RecordingSubscriber<String, ContractError>()
    flattened.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    inners[1].send("1a")
    inners[2].send("2a")
    inners[1].send("1b")
    #expect(recorder.values == ["1a", "2a", "1b"])
  }

  @Test func anInnerFailureOverANeverFailingUpstreamCancelsTheUpstreamAndTheOtherInners() {
    let upstream = PassthroughSubject<Int, Never>()
    let inners = Inners<ContractError>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    inners[1].send("1a")
    inners[2].send(completion: .failure(.boom))
    inners[1].send("1b")
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.failure(.boom))])
    #expect(upstream.subscriberCount == 0)
    #expect(inners[1].subscriberCount == 0)
  }

  @Test func overANeverFailingUpstreamFinishesWhenTheUpstreamAndEveryInnerHaveFinished() {
    let upstream = PassthroughSubject<Int, Never>()
    let inners = Inners<ContractError>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    inners[1].send(completion: .finished)
    upstream.send(completion: .finished)
    #expect(recorder.completions.isEmpty)
    inners[2].send("2a")
    inners[2].send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("2a"), .completion(.finished)])
  }

  @Test func aNeverFailingUpstreamHonoursMaxPublishers() {
    let upstream = PassthroughSubject<Int, Never>()
    let inners = Inners<ContractError>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap(maxPublishers: .max(1)) { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)  // not requested yet: dropped by the subject
    inners[1].send(completion: .finished)
    upstream.send(3)
    inners[3].send("3a")
    #expect(recorder.values == ["3a"])
    #expect(inners[2].subscriberCount == 0)
  }

  @Test func keepsThePublisherContractOverANeverFailingUpstream() {
    checkContract {
      let upstream = PassthroughSubject<Int, Never>()
      return ContractRig(
        publisher: upstream.flatMap { Self.justOrFail($0) }, send: { upstream.send($0) },
        finish: { upstream.send(completion: .finished) }, fail: { upstream.send(-1) })
    }
  }

  // MARK: An upstream that can fail, inner publishers that cannot

  @Test func neverFailingInnersTakeTheUpstreamFailureTypeAndMergeInOrder() {
    let inners = Inners<Never>()
    let flattened:
      Publishers.FlatMap<
        Publishers.SetFailureType<PassthroughSubject<String, Never>, ContractError>,
        PassthroughSubject<Int, ContractError>
      > = upstream.flatMap { inners[$0] }
    let recorder = RecordingSubscriber<String, ContractError>()
    flattened.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    inners[2].send("2a")
    inners[1].send("1a")
    inners[2].send("2b")
    #expect(recorder.values == ["2a", "1a", "2b"])
  }

  @Test func anUpstreamFailureIsForwardedAndCancelsTheNeverFailingInners() {
    let inners = Inners<Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    inners[1].send("1a")
    upstream.send(completion: .failure(.boom))
    inners[2].send("2a")
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.failure(.boom))])
    #expect(inners[1].subscriberCount == 0 && inners[2].subscriberCount == 0)
  }

  @Test func overNeverFailingInnersFinishesWhenTheUpstreamAndEveryInnerHaveFinished() {
    let inners = Inners<Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(completion: .finished)
    inners[1].send("1a")
    #expect(recorder.completions.isEmpty)
    inners[1].send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func cancelCancelsTheUpstreamAndEveryNeverFailingInner() {
    let inners = Inners<Never>()
    let recorder = RecordingSubscriber<String, ContractError>()
    upstream.flatMap { inners[$0] }.subscribe(recorder)
    upstream.send(1)
    upstream.send(2)
    recorder.cancel()
    #expect(upstream.subscriberCount == 0)
    #expect(inners[1].subscriberCount == 0 && inners[2].subscriberCount == 0)
  }

  @Test func keepsThePublisherContractWithNeverFailingInners() {
    checkOperatorContract { upstream in upstream.flatMap { Just($0) } }
  }

  // MARK: Nothing can fail

  @Test func whenNothingCanFailTheTypesStayUnchanged() {
    let upstream = PassthroughSubject<Int, Never>()
    let inners = Inners<Never>()
    let flattened:
      Publishers.FlatMap<PassthroughSubject<String, Never>, PassthroughSubject<Int, Never>> =
        upstream.flatMap { inners[$0] }
    let recorder = RecordingSubscriber<String, Never>()
    flattened.subscribe(recorder)
    upstream.send(1)
    inners[1].send("1a")
    upstream.send(completion: .finished)
    inners[1].send(completion: .finished)
    #expect(recorder.events == [.subscription, .value("1a"), .completion(.finished)])
  }

  @Test func keepsThePublisherContractWhenNothingCanFail() {
    checkContract {
      let upstream = PassthroughSubject<Int, Never>()
      return ContractRig(
        publisher: upstream.flatMap { Just($0) }, send: { upstream.send($0) },
        finish: { upstream.send(completion: .finished) },
        // A source that cannot fail can only complete by finishing.
        fail: { upstream.send(completion: .finished) })
    }
  }
}
