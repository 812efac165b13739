import Dispatch
import Streams
import Synchronization
import Testing

@Suite struct FutureTests {
  @Test func keepsThePublisherContract() {
    checkContract { ContractRig(publisher: Future<Int, ContractError> { $0(.success(1)) }) }
    checkContract { ContractRig(publisher: Future<Int, ContractError> { $0(.failure(.boom)) }) }
  }

  @Test func deliversTheResultToEarlyAndLateSubscribers() {
    let promise = Mutex<Future<Int, Never>.Promise?>(nil)
    let future = Future<Int, Never> { fulfil in promise.withLock { $0 = fulfil } }
    let early = RecordingSubscriber<Int, Never>()
    future.subscribe(early)
    #expect(early.values.isEmpty)
    promise.withLock { $0 }?(.success(5))
    promise.withLock { $0 }?(.success(6))
    let late = RecordingSubscriber<Int, Never>()
    future.subscribe(late)
    #expect(early.events == [.subscription, .value(5), .completion(.finished)])
    #expect(late.events == early.events)
  }

  @Test func valueWaitsForDemandButFailureDoesNot() {
    let value = RecordingSubscriber<Int, ContractError>(initialDemand: .none)
    Future<Int, ContractError> { $0(.success(1)) }.subscribe(value)
    #expect(value.values.isEmpty)
    value.request(.max(1))
    #expect(value.values == [1])
    let failure = RecordingSubscriber<Int, ContractError>(initialDemand: .none)
    Future<Int, ContractError> { $0(.failure(.boom)) }.subscribe(failure)
    #expect(failure.completions == [.failure(.boom)])
  }

  @Test func fulfilledFromAnotherThreadReachesAnUnheldFuture() async {
    let kept = Mutex<AnyCancellable?>(nil)
    let value = await withCheckedContinuation { continuation in
      let cancellable = Future<Int, Never> { promise in
        DispatchQueue.global().async { promise(.success(9)) }
      }.sink { continuation.resume(returning: $0) }
      kept.withLock { $0 = cancellable }
    }
    #expect(value == 9)
  }
}
