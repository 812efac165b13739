import Testing

@testable import TetherHTTP

@Suite struct BackoffTests {
  let backoff = Backoff(initial: .milliseconds(200), maximum: .seconds(10))

  @Test func theCeilingDoublesPerFailureUpToTheMaximum() {
    #expect(backoff.ceiling(afterFailures: 0) == .zero)
    #expect(backoff.ceiling(afterFailures: 1) == .milliseconds(200))
    #expect(backoff.ceiling(afterFailures: 2) == .milliseconds(400))
    #expect(backoff.ceiling(afterFailures: 6) == .milliseconds(6_400))
    #expect(backoff.ceiling(afterFailures: 7) == .seconds(10))
    #expect(backoff.ceiling(afterFailures: 1_000_000) == .seconds(10))
  }

  @Test func fullJitterSpansFromTheMinimumToTheCeiling() {
    #expect(backoff.delay(afterFailures: 3, random: 0) == .zero)
    #expect(backoff.delay(afterFailures: 3, random: 1) == .milliseconds(800))
    #expect(backoff.delay(afterFailures: 3, random: 0.5) == .milliseconds(400))
    let polling = Backoff(initial: .seconds(20), maximum: .seconds(160), minimum: .seconds(10))
    #expect(polling.delay(afterFailures: 0) == .seconds(10))
    #expect(polling.delay(afterFailures: 1, random: 0) == .seconds(10))
    #expect(polling.delay(afterFailures: 1, random: 1) == .seconds(20))
  }

  @Test func equalJitterKeepsAtLeastHalfTheCeiling() {
    let equal = Backoff(initial: .seconds(1), maximum: .seconds(60), jitter: .equal)
    #expect(equal.delay(afterFailures: 2, random: 0) == .seconds(1))
    #expect(equal.delay(afterFailures: 2, random: 1) == .seconds(2))
    let none = Backoff(initial: .seconds(1), maximum: .seconds(60), jitter: .none)
    #expect(none.delay(afterFailures: 3, random: 0) == .seconds(4))
  }

  @Test func retryAfterIsAFloorThatNeverPassesTheMaximum() {
    #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(3), random: 0) == .seconds(3))
    #expect(
      backoff.delay(afterFailures: 1, retryAfter: .seconds(86_400), random: 0) == .seconds(10))
    #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(-5), random: 0) == .zero)
  }

  @Test func itGivesUpAfterTheMaximumFailures() {
    let limited = Backoff(initial: .seconds(1), maximum: .seconds(8), maximumFailures: 3)
    #expect(limited.delay(afterFailures: 3, random: 1) == .seconds(4))
    #expect(limited.delay(afterFailures: 4) == nil)
  }

  @Test func hostileInputsNeitherTrapNorGoNegative() {
    let odd = Backoff(
      initial: .seconds(-1), maximum: .seconds(-10), multiplier: .infinity,
      minimum: .seconds(99), maximumFailures: -3)
    #expect(odd.initial == .zero && odd.maximum == .zero && odd.minimum == .zero)
    #expect(odd.delay(afterFailures: 0, random: .nan) == .zero)
    #expect(backoff.delay(afterFailures: Int.max, random: .infinity) == .seconds(10))
    #expect(backoff.delay(afterFailures: -4, random: 0.5) == .zero)
  }
}
