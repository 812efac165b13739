import TetherSupport

extension Sequence {
  /// A publisher that emits the elements of this sequence on demand, then finishes.
  ///
  /// ```swift
  /// let cancellable = [1, 2, 3].publisher.sink { print($0) }
  /// ```
  @inlinable public var publisher: Publishers.Sequence<Self, Never> {
    Publishers.Sequence(sequence: self)
  }
}

extension Publishers {
  /// A publisher that publishes the elements of a sequence, as many as each subscriber asks
  /// for, then finishes.
  public struct Sequence<Elements: Swift.Sequence, Failure: Error>: Publisher {
    /// Sequence publishes the elements of the sequence.
    public typealias Output = Elements.Element

    /// The sequence of elements to publish; each subscriber iterates it from the start.
    public let sequence: Elements

    /// Creates a publisher for a sequence of elements.
    @inlinable public init(sequence: Elements) { self.sequence = sequence }

    /// Attaches the subscriber; elements are produced as it asks for them.
    @inlinable public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      var iterator = sequence.makeIterator()
      guard let first = iterator.next() else {
        subscriber.receive(subscription: EmptySubscription())
        subscriber.receive(completion: .finished)
        return
      }
      subscriber.receive(
        subscription: SequenceSubscription(downstream: subscriber, first: first, rest: iterator))
    }
  }
}

/// Emits a sequence's elements within demand, then finishes.
///
/// Not generic: `request` and `cancel` arrive through `any Subscription`, where generic code
/// runs unspecialised and looks up metadata on every call. What needs the element and
/// subscriber types (reading the iterator, delivering) is a closure made in `init`, which is
/// inlined where those types are known, so it runs specialised.
@usableFromInline
final class SequenceSubscription: Subscription {
  /// Delivers the next element; returns the demand the subscriber added and whether that
  /// was the last element (the completion has then been sent too).
  @usableFromInline typealias Step = (SequenceSubscription) -> (Subscribers.Demand, Bool)

  @usableFromInline struct State {
    /// Holds the subscriber and the iterator; `nil` once finished or cancelled.
    @usableFromInline var step: Step?
    @usableFromInline var demand = Subscribers.Demand.none
    @usableFromInline var isEmitting = false

    @inlinable init(step: @escaping Step) { self.step = step }
  }

  @usableFromInline let state: Lock<State>

  @inlinable init<S: Subscriber, Iterator: IteratorProtocol>(
    downstream: S, first: S.Input, rest: Iterator
  ) where Iterator.Element == S.Input {
    // The element after the one delivered is read ahead, so the last one goes with the
    // completion. Only the emitter (the caller that set `isEmitting`) runs the step.
    var next: S.Input? = first
    var rest = rest
    state = Lock(
      unchecked:
        State { subscription in
          guard let value = next else { return (.none, true) }
          next = rest.next()
          let more = downstream.receive(value)
          guard next == nil else { return (more, false) }
          // The subscriber may have cancelled while receiving the last element.
          if subscription.isLive { downstream.receive(completion: .finished) }
          return (.none, true)
        })
  }

  /// Whether the subscription is neither finished nor cancelled.
  @usableFromInline var isLive: Bool { state.withLockUnchecked { $0.step != nil } }

  @usableFromInline func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    guard
      let step = state.withLockUnchecked({ state -> Step? in
        guard state.step != nil else { return nil }
        state.demand += demand
        guard !state.isEmitting else { return nil }
        state.isEmitting = true
        return state.step
      })
    else { return }
    while true {
      let proceed = state.withLockUnchecked { state -> Bool in
        guard state.step != nil, state.demand > 0 else {
          state.isEmitting = false
          return false
        }
        state.demand -= 1
        return true
      }
      guard proceed else { return }
      let (more, isLast) = step(self)
      if isLast {
        let released = state.withLockUnchecked { state -> Step? in
          defer { state.step = nil }
          return state.step
        }
        _ = released
        return
      }
      if more > 0 { state.withLockUnchecked { $0.demand += more } }
    }
  }

  @usableFromInline func cancel() {
    // Moved out so that the subscriber's last release happens after the lock.
    let released = state.withLockUnchecked { state -> Step? in
      defer { state.step = nil }
      return state.step
    }
    _ = released
  }
}
