import Synchronization

/// A publisher that emits an output to each subscriber just once, and then finishes.
///
/// The value is delivered when the subscriber first asks for at least one value.
public struct Just<Output>: Publisher {
  /// Just never fails.
  public typealias Failure = Never

  /// The one element that the publisher emits.
  public let output: Output

  /// Creates a publisher that emits `output` once, then finishes.
  public init(_ output: Output) { self.output = output }

  /// Attaches the subscriber and delivers the value on its first demand.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
    let subscription = SingleValueSubscription(subscriber, value: output)
    subscriber.receive(subscription: subscription)
  }
}

extension Just: Sendable where Output: Sendable {}
extension Just: Equatable where Output: Equatable {}

/// Delivers one value (or only a completion) on the first positive demand, then finishes.
final class SingleValueSubscription<S: Subscriber>: Subscription, @unchecked Sendable {
  // @unchecked: the subscriber and the value live in `state`, a Mutex, and leave it once.
  private enum Phase {
    case pending(S, S.Input?)
    case delivering
    case done
  }

  private let state: Locked<Phase>

  init(_ subscriber: S, value: S.Input?) {
    state = Locked(.pending(subscriber, value))
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let pending: (S, S.Input?)? = state.withLock { phase in
      guard case .pending(let subscriber, let value) = phase else { return nil }
      phase = .delivering
      return (subscriber, value)
    }
    guard let (subscriber, value) = pending else { return }
    if let value { _ = subscriber.receive(value) }
    // The subscriber may have cancelled while receiving the value.
    let stillLive = state.withLock { phase in
      guard case .delivering = phase else { return false }
      phase = .done
      return true
    }
    if stillLive { subscriber.receive(completion: .finished) }
  }

  func cancel() {
    // Moved out so that the subscriber's last release happens after the lock.
    let released = state.withLock { phase in
      defer { phase = .done }
      return phase
    }
    _ = released
  }
}
