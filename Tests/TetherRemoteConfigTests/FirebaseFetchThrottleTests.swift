import Foundation
import Testing
import TetherRemoteConfig

/// The throttle's decisions, at chosen instants and with chosen jitter: no server, no clock.
@Suite struct FirebaseFetchThrottleTests {
  let now = Date(timeIntervalSinceReferenceDate: 800_000_000)

  @Test func aFreshThrottleLetsEveryFetchGo() {
    let throttle = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(throttle.refusal(at: now) == nil)
    #expect(throttle.throttledUntil(at: now) == nil)
    #expect(throttle.consecutiveAnswers == 0)
  }

  @Test func a429WaitsHalfToAllOfTheFirstBackoffAndRefusesUntilItsEnd() {
    var throttle = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      throttle.throttled(status: 429, retryAfter: nil, at: now, random: 0)
        == .throttled(status: 429, retryAfter: 30))
    #expect(throttle.throttledUntil(at: now) == now.addingTimeInterval(30))
    // Inside the back-off: refused with the whole seconds left.
    #expect(
      throttle.refusal(at: now.addingTimeInterval(10))
        == .throttled(status: 429, retryAfter: 20))
    #expect(
      throttle.refusal(at: now.addingTimeInterval(29.2))
        == .throttled(status: 429, retryAfter: 1))
    // At its end the next fetch goes.
    #expect(throttle.refusal(at: now.addingTimeInterval(30)) == nil)
    #expect(throttle.throttledUntil(at: now.addingTimeInterval(30)) == nil)

    var other = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      other.throttled(status: 429, retryAfter: nil, at: now, random: 1)
        == .throttled(status: 429, retryAfter: 60))
  }

  @Test func eachFurtherThrottlingAnswerDoublesTheWaitUpToFourHours() {
    var throttle = FirebaseFetchThrottle(initialBackoff: 60)
    var waits: [TimeInterval?] = []
    for _ in 0..<10 {
      waits.append(throttle.throttled(status: 429, retryAfter: nil, at: now, random: 1).retryAfter)
    }
    #expect(waits == [60, 120, 240, 480, 960, 1920, 3840, 7680, 14_400, 14_400])
    #expect(throttle.consecutiveAnswers == 10)
    // A first back-off longer than the cap is the cap.
    #expect(FirebaseFetchThrottle(initialBackoff: 1e9).backoff.initial == .seconds(14_400))
  }

  @Test func retryAfterIsAFloorCappedAtFourHours() {
    var throttle = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      throttle.throttled(status: 503, retryAfter: 600, at: now, random: 0)
        == .serverError(status: 503, retryAfter: 600))
    var capped = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      capped.throttled(status: 429, retryAfter: 1e6, at: now, random: 0)
        == .throttled(status: 429, retryAfter: 14_400))
    // A shorter Retry-After does not shorten the back-off.
    var short = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      short.throttled(status: 429, retryAfter: 5, at: now, random: 1)
        == .throttled(status: 429, retryAfter: 60))
  }

  @Test(arguments: [500, 503, 504])
  func aServerFailureIsRefusedWithItsOwnStatus(status: Int) {
    var throttle = FirebaseFetchThrottle(initialBackoff: 60)
    #expect(
      throttle.throttled(status: status, retryAfter: nil, at: now, random: 1)
        == .serverError(status: status, retryAfter: 60))
    #expect(
      throttle.refusal(at: now.addingTimeInterval(0.5))
        == .serverError(status: status, retryAfter: 60))
  }

  @Test func anAnswerEndsTheBackoffAndForgivesTheCount() {
    var throttle = FirebaseFetchThrottle(initialBackoff: 60)
    for _ in 0..<3 { _ = throttle.throttled(status: 503, retryAfter: nil, at: now, random: 1) }
    throttle.answered()
    #expect(throttle.refusal(at: now) == nil)
    #expect(throttle.throttledUntil(at: now) == nil)
    #expect(throttle.consecutiveAnswers == 0)
    // The next throttling answer starts over from the first back-off, with its own status.
    #expect(
      throttle.throttled(status: 429, retryAfter: nil, at: now, random: 1)
        == .throttled(status: 429, retryAfter: 60))
    #expect(throttle.refusal(at: now) == .throttled(status: 429, retryAfter: 60))
  }

  @Test func onlyTheSDKsThrottlingStatusesThrottle() {
    #expect([429, 500, 503, 504].allSatisfy(FirebaseFetchThrottle.isThrottling(status:)))
    #expect(
      [200, 304, 400, 401, 403, 404, 408, 502].allSatisfy {
        !FirebaseFetchThrottle.isThrottling(status: $0)
      })
  }
}
