import Synchronization
import TestSupport
import Testing

@Suite struct WaitUntilTests {
  @Test func returnsOnceTheConditionHolds() async throws {
    let counter = Counter()
    let producer = Task.detached {
      for _ in 0..<5 {
        counter.increment()
        await Task.yield()
      }
    }
    try await waitUntil("the counter to reach 5") { counter.value == 5 }
    #expect(counter.value == 5)
    await producer.value
  }

  @Test func returnsAtOnceWhenTheConditionAlreadyHolds() async throws {
    let clock = ContinuousClock()
    let start = clock.now
    try await waitUntil(timeout: .seconds(10)) { true }
    #expect(clock.now - start < .seconds(1))
  }

  @Test func throwsATimeoutErrorNamingTheCondition() async throws {
    let clock = ContinuousClock()
    let start = clock.now
    let error = await #expect(throws: TimeoutError.self) {
      try await waitUntil("the moon to turn blue", timeout: .milliseconds(50)) { false }
    }
    #expect(clock.now - start >= .milliseconds(50))
    #expect(error?.waitingFor == "the moon to turn blue")
    #expect(error?.description.hasPrefix("timed out after") == true)
  }

  @Test func aThrowingConditionEndsTheWait() async throws {
    struct Broken: Error {}
    await #expect(throws: Broken.self) {
      try await waitUntil { throw Broken() }
    }
  }

  @Test func cancellationEndsTheWait() async throws {
    let waiter = Task { try await waitUntil(timeout: .seconds(30)) { false } }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
  }

  @Test func withTimeoutReturnsTheResultInTime() async throws {
    let value = try await withTimeout(.seconds(5)) { 42 }
    #expect(value == 42)
  }

  @Test func withTimeoutCancelsAnOperationThatTakesTooLong() async throws {
    let (stream, continuation) = AsyncStream<Int>.makeStream()
    let error = await #expect(throws: TimeoutError.self) {
      try await withTimeout(.milliseconds(50), "a value that never comes") {
        await stream.first { _ in true }
      }
    }
    #expect(error?.waitingFor == "a value that never comes")
    continuation.finish()
  }

  @Test func deadlineCountsDown() {
    let deadline = Deadline.after(.seconds(60))
    #expect(!deadline.hasPassed)
    #expect(deadline.remaining > .seconds(59))
    #expect(deadline.remaining <= .seconds(60))
    let passed = Deadline.after(.zero)
    #expect(passed.hasPassed)
    #expect(passed.remaining == .zero)
  }
}

/// A thread-safe counter for the condition under test.
private final class Counter: Sendable {
  private let count = Atomic(0)
  var value: Int { count.load(ordering: .acquiring) }
  func increment() { count.wrappingAdd(1, ordering: .releasing) }
}
