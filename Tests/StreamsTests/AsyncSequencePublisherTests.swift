import Streams
import Synchronization
import Testing

@Suite struct AsyncSequencePublisherTests {
  /// Waits for a condition that another task makes true, polling with yields until a
  /// deadline (a waiting-for-condition helper: no sleep).
  func waitForCondition(_ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
      if ContinuousClock.now > deadline { return false }
      await Task.yield()
    }
    return true
  }

  @Test func honoursDemand() async {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    (1...5).forEach { continuation.yield($0) }
    continuation.finish()
    let recorder = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
    stream.publisher.subscribe(recorder)
    #expect(await waitForCondition { recorder.values.count == 2 })
    // The iteration waits for demand: it does not run ahead and finish.
    for _ in 0..<100 { await Task.yield() }
    #expect(recorder.values == [1, 2])
    recorder.request(.unlimited)
    #expect(await waitForCondition { recorder.completions == [.finished] })
    #expect(recorder.values == [1, 2, 3, 4, 5])
  }

  @Test func cancelStopsTheIteration() async {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    let terminated = Mutex(false)
    continuation.onTermination = { _ in terminated.withLock { $0 = true } }
    let recorder = RecordingSubscriber<Int, Never>()
    stream.publisher.subscribe(recorder)
    continuation.yield(1)
    #expect(await waitForCondition { recorder.values == [1] })
    recorder.cancel()
    #expect(await waitForCondition { terminated.withLock { $0 } })
    continuation.yield(2)
    #expect(recorder.values == [1])
  }

  @Test func failureOfAThrowingSequenceFailsTheStream() async {
    let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
    continuation.yield(1)
    continuation.finish(throwing: ContractError.boom)
    let recorder = RecordingSubscriber<Int, any Error>()
    stream.publisher.subscribe(recorder)
    #expect(await waitForCondition { !recorder.completions.isEmpty })
    #expect(recorder.values == [1])
    if case .failure(let error) = recorder.completions.first {
      #expect(error as? ContractError == .boom)
    } else {
      Issue.record("expected the failure")
    }
  }
}
