import Synchronization
import TetherSupport

/// A publisher that emits an output to each subscriber just once, and then finishes.
///
/// The value is delivered when the subscriber first asks for at least one value.
public struct Just<Output>: Publisher {
  /// Just never fails.
  public typealias Failure = Never

  /// The one element that the publisher emits.
  public let output: Output

  /// Creates a publisher that emits `output` once, then finishes.
  @inlinable public init(_ output: Output) { self.output = output }

  /// Attaches the subscriber and delivers the value on its first demand.
  @inlinable public func receive<S: Subscriber>(subscriber: S)
  where S.Input == Output, S.Failure == Never {
    let subscription = SingleValueSubscription(subscriber, value: output)
    subscriber.receive(subscription: subscription)
  }
}

extension Just: Sendable where Output: Sendable {}
extension Just: Equatable where Output: Equatable {}

/// Delivers one value (or only a completion) on the first positive demand, then finishes.
///
/// Not generic: `request` and `cancel` arrive through `any Subscription`, where generic code
/// runs unspecialised and looks up metadata on every call. What needs the subscriber's type
/// (delivering the value and the completion) is a closure made in `init`, which is inlined
/// where the subscriber's type is known, so it runs specialised.
@usableFromInline
final class SingleValueSubscription: Subscription {
  @usableFromInline typealias Emit = (SingleValueSubscription) -> Void

  /// The lock-protected state: the delivery closure (which holds the subscriber and the
  /// value) until it is taken or cancelled.
  @usableFromInline struct State {
    @usableFromInline var emit: Emit?
    @usableFromInline var isDelivering = false

    @inlinable init(emit: @escaping Emit) { self.emit = emit }
  }

  @usableFromInline let state: Lock<State>

  @inlinable init<S: Subscriber>(_ subscriber: S, value: S.Input?) {
    state = Lock(
      unchecked:
        State { subscription in
          if let value { _ = subscriber.receive(value) }
          // The subscriber may have cancelled while receiving the value.
          if subscription.endDelivery() { subscriber.receive(completion: .finished) }
        })
  }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let emit = state.withLockUnchecked { state -> Emit? in
      defer { state.emit = nil }
      if state.emit != nil { state.isDelivering = true }
      return state.emit
    }
    emit?(self)
  }

  /// The value was delivered; `true` if the subscriber did not cancel meanwhile.
  @usableFromInline func endDelivery() -> Bool {
    state.withLockUnchecked { state in
      defer { state.isDelivering = false }
      return state.isDelivering
    }
  }

  @usableFromInline func cancel() {
    // Moved out so that the subscriber's last release happens after the lock.
    let released = state.withLockUnchecked { state -> Emit? in
      state.isDelivering = false
      defer { state.emit = nil }
      return state.emit
    }
    _ = released
  }
}
