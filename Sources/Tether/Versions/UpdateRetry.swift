import TetherSupport

/// How `update` retries a write the store refused because someone else wrote first: a jittered
/// back-off (the one back-off engine, full jitter, so that equal writers fall out of lockstep),
/// for as long as ``deadline`` allows.
///
/// The deadline is the documented promise of `Shared.update`: an update keeps retrying a refused
/// write for up to 30 seconds from its start, and throws the refusal only after that. Each wait
/// is chosen below a ceiling that doubles from 2 ms up to 250 ms.
package struct UpdateRetry: BackoffEngine, Sendable, Equatable {
  package var initial: Duration = .milliseconds(2)
  package var maximum: Duration = .milliseconds(250)
  package var multiplier = 2.0
  package var minimum: Duration = .zero
  package var spread: BackoffSpread = .full
  package var maximumFailures: Int? = nil
  /// How long after its start an update may still retry.
  package var deadline: Duration = .seconds(30)

  package init() {}

  /// The policy of `Shared.update`.
  package static let standard = UpdateRetry()

  /// The wait before the next attempt after `failures` consecutive refusals, placed under the
  /// ceiling by `random` (in `0...1`).
  package func delay(afterFailures failures: Int, random: Double) -> Duration {
    engineDelay(afterFailures: failures, retryAfter: nil, random: random) ?? maximum
  }

  /// The wait before the next attempt after `failures` consecutive refusals, at random below
  /// the ceiling.
  package func delay(afterFailures failures: Int) -> Duration {
    delay(afterFailures: failures, random: Double.random(in: 0...1))
  }
}
