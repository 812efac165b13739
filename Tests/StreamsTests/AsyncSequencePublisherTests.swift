import Streams
import TestSupport
import Testing

@Suite struct AsyncSequencePublisherTests {
  @Test func honoursDemand() async throws {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    (1...5).forEach { continuation.yield($0) }
    continuation.finish()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    stream.publisher.subscribe(recorder)
    try await waitUntil { recorder.values.count == 2 }
    // The iteration waits for demand: it does not run ahead and finish.
    for _ in 0..<100 { await Task.yield() }
    #expect(recorder.values == [1, 2])
    recorder.request(.unlimited)
    try await waitUntil { recorder.completions == [.finished] }
    #expect(recorder.values == [1, 2, 3, 4, 5])
  }

  @Test func cancelStopsTheIteration() async throws {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    let terminated = LockedState(false)
    continuation.onTermination = { _ in terminated.withLock { $0 = true } }
    let recorder = RecordingSubscriber<Int, Never>()
    stream.publisher.subscribe(recorder)
    continuation.yield(1)
    try await waitUntil { recorder.values == [1] }
    recorder.cancel()
    try await waitUntil { terminated.withLock { $0 } }
    continuation.yield(2)
    #expect(recorder.values == [1])
  }

  @Test func failureOfAThrowingSequenceFailsTheStream() async throws {
    let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
    continuation.yield(1)
    continuation.finish(throwing: ContractError.boom)
    let recorder = RecordingSubscriber<Int, any Error>()
    stream.publisher.subscribe(recorder)
    try await waitUntil { !recorder.completions.isEmpty }
    #expect(recorder.values == [1])
    if case .failure(let error) = recorder.completions.first {
      #expect(error as? ContractError == .boom)
    } else {
      Issue.record("expected the failure")
    }
  }
}
