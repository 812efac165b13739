extension Sequence {
  /// A publisher that emits the elements of this sequence on demand, then finishes.
  ///
  /// ```swift
  /// let cancellable = [1, 2, 3].publisher.sink { print($0) }
  /// ```
  public var publisher: Publishers.Sequence<Self, Never> {
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
    public init(sequence: Elements) { self.sequence = sequence }

    /// Attaches the subscriber; elements are produced as it asks for them.
    public func receive<S: Subscriber>(subscriber: S)
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

/// Emits a sequence's elements while demand lasts.
///
/// Whoever finds demand and nobody emitting becomes the emitter and loops; a request made
/// while emitting (also re-entrantly, from inside `receive`) only adds demand, so the
/// recursion depth stays constant and calls into the subscriber are never concurrent.
final class SequenceSubscription<S: Subscriber, Iterator: IteratorProtocol>: Subscription,
  @unchecked Sendable
where Iterator.Element == S.Input {
  // @unchecked: every stored property lives in `state`, a Mutex.
  private struct State {
    var downstream: S?
    var next: S.Input?
    var rest: Iterator
    var demand: Subscribers.Demand = .none
    var isEmitting = false
  }

  private let state: Locked<State>

  init(downstream: S, first: S.Input, rest: Iterator) {
    state = Locked(State(downstream: downstream, next: first, rest: rest))
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let becameEmitter = state.withLock { state in
      guard state.downstream != nil else { return false }
      state.demand += demand
      guard !state.isEmitting else { return false }
      state.isEmitting = true
      return true
    }
    guard becameEmitter else { return }
    while true {
      // The element after this one is read ahead, so the last one goes with the completion.
      let step: (S, S.Input, isLast: Bool)? = state.withLock { state in
        guard let downstream = state.downstream, state.demand > 0, let value = state.next
        else {
          state.isEmitting = false
          return nil
        }
        state.demand -= 1
        state.next = state.rest.next()
        let isLast = state.next == nil
        if isLast { state = State(downstream: nil, next: nil, rest: state.rest) }
        return (downstream, value, isLast)
      }
      guard let (downstream, value, isLast) = step else { return }
      let more = downstream.receive(value)
      if isLast {
        downstream.receive(completion: .finished)
        return
      }
      if more > 0 { state.withLock { $0.demand += more } }
    }
  }

  func cancel() {
    let downstream = state.withLock { state in
      defer {
        state.downstream = nil
        state.next = nil
      }
      return state.downstream
    }
    _ = downstream
  }
}
