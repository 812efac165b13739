/// A point in time by which something must have happened, measured on the monotonic
/// `ContinuousClock`.
///
/// ```swift
/// let deadline = Deadline.after(.seconds(2))
/// while !deadline.hasPassed { ... }
/// ```
public struct Deadline: Sendable, Hashable, CustomStringConvertible {
  /// The instant at which the deadline passes.
  public let instant: ContinuousClock.Instant
  /// The duration the deadline was created with (for error messages).
  public let duration: Duration

  /// The timeout every TestSupport wait uses unless told otherwise: 30 seconds.
  ///
  /// Generous on purpose: a passing test never waits this long, and a CI machine with two
  /// busy cores can stall a test's task for several seconds.
  public static let defaultTimeout: Duration = .seconds(30)

  /// A deadline `duration` from now.
  public init(after duration: Duration) {
    self.instant = ContinuousClock.now.advanced(by: duration)
    self.duration = duration
  }

  /// A deadline `duration` from now.
  public static func after(_ duration: Duration) -> Deadline {
    Deadline(after: duration)
  }

  /// Whether the deadline has passed.
  public var hasPassed: Bool { ContinuousClock.now >= instant }

  /// The time left before the deadline; `.zero` once it has passed.
  public var remaining: Duration {
    let left = instant - ContinuousClock.now
    return left > .zero ? left : .zero
  }

  /// A description such as `deadline in 1.2 seconds`.
  public var description: String { "deadline in \(remaining) (of \(duration))" }
}

/// The error every TestSupport wait throws when its deadline passes.
///
/// Its description says what was awaited and for how long, plus any context the waiter has
/// (the child process's recent output and standard error, the requests the server saw), so a
/// failing test explains itself.
public struct TimeoutError: Error, CustomStringConvertible {
  /// What the caller was waiting for, such as `a line matching "ready"`.
  public let waitingFor: String
  /// How long it waited.
  public let timeout: Duration
  /// Extra context for the failure message, or an empty string.
  public let context: String

  /// Creates a timeout error.
  public init(waitingFor: String, after timeout: Duration, context: String = "") {
    self.waitingFor = waitingFor
    self.timeout = timeout
    self.context = context
  }

  /// A readable description, such as `timed out after 2.0 seconds waiting for a line`.
  public var description: String {
    let base = "timed out after \(timeout) waiting for \(waitingFor)"
    return context.isEmpty ? base : "\(base)\n\(context)"
  }
}
