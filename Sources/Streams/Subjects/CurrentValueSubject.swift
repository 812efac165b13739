/// A subject that wraps a single value and publishes a new element whenever the value changes.
///
/// A new subscriber first receives the current value (as soon as it has demand), then every
/// later value. Setting ``value`` is the same as calling ``send(_:)``. A subscriber without
/// demand does not lose the newest value: it is held and delivered when demand arrives.
/// `send` may be called from any thread, also re-entrantly from inside a subscriber.
///
/// ```swift
/// let temperature = CurrentValueSubject<Double, Never>(20)
/// let cancellable = temperature.sink { print($0) }  // prints 20.0
/// temperature.value = 21                           // prints 21.0
/// ```
public final class CurrentValueSubject<Output, Failure: Error>: Subject {
  @usableFromInline let core: SubjectCore<Output, Failure>

  /// Creates a subject holding the given initial value.
  @inlinable public init(_ value: Output) {
    core = SubjectCore(current: value)
  }

  /// The value the subject holds; setting it sends the new value to subscribers.
  ///
  /// The getter returns the newest value sent, even while an earlier one is still being
  /// delivered. After a completion the value no longer changes.
  @inlinable public var value: Output {
    get { core.current! }
    set { send(newValue) }
  }

  /// Makes `value` the current value and sends it to every subscriber.
  @inlinable public func send(_ input: Output) { core.send(input) }

  /// Sends a completion to every subscriber; later sends are ignored.
  public func send(completion: Subscribers.Completion<Failure>) {
    core.send(completion: completion)
  }

  /// Requests unlimited values from an upstream subscription the subject republishes.
  public func send(subscription: any Subscription) { core.send(subscription: subscription) }

  /// Attaches a subscriber; it receives its subscription, then the current value on demand.
  @inlinable @inline(__always) public func receive<S: Subscriber>(subscriber: S)
  where S.Input == Output, S.Failure == Failure {
    core.attach(subscriber)
  }

  /// The number of attached subscribers (for diagnostics and tests).
  @inlinable public var subscriberCount: Int { core.conduitCount }
}

// @unchecked: all mutable state lives in `SubjectCore.state` and each conduit's `state`,
// both `Mutex`es; values cross threads, hence the requirement that `Output` be Sendable.
extension CurrentValueSubject: @unchecked Sendable where Output: Sendable {}
