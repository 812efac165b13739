/// A subject that broadcasts values to its current subscribers.
///
/// A `PassthroughSubject` keeps no value: a subscriber sees only what is sent after it
/// subscribed, and a value sent while a subscriber has no outstanding demand is dropped for
/// that subscriber. `send` may be called from any thread, also re-entrantly from inside a
/// subscriber; every subscriber sees the values in the same order, and a re-entrant send is
/// delivered after the one being delivered.
///
/// ```swift
/// let taps = PassthroughSubject<Int, Never>()
/// let cancellable = taps.sink { print("tap", $0) }
/// taps.send(1)  // prints "tap 1"
/// ```
public final class PassthroughSubject<Output, Failure: Error>: Subject {
  @usableFromInline let core = SubjectCore<Output, Failure>(current: nil)

  /// Creates a subject with no subscribers.
  @inlinable public init() {}

  /// Sends a value to every subscriber that has outstanding demand.
  @inlinable public func send(_ input: Output) { core.send(input) }

  /// Sends a completion to every subscriber; later sends are ignored, and later subscribers
  /// receive the completion at once.
  public func send(completion: Subscribers.Completion<Failure>) {
    core.send(completion: completion)
  }

  /// Requests unlimited values from an upstream subscription the subject republishes.
  public func send(subscription: any Subscription) { core.send(subscription: subscription) }

  /// Attaches a subscriber; it receives its subscription through the subject's queue.
  @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
  where S.Input == Output, S.Failure == Failure {
    core.attach(subscriber)
  }

  /// The number of attached subscribers (for diagnostics and tests).
  @inlinable public var subscriberCount: Int { core.conduitCount }
}

// @unchecked: all mutable state lives in `SubjectCore.state` and each conduit's `state`,
// both `Mutex`es; values cross threads, hence the requirement that `Output` be Sendable.
extension PassthroughSubject: @unchecked Sendable where Output: Sendable {}
