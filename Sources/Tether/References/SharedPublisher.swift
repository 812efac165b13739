import Streams
import Synchronization
import TetherSupport

/// The `Streams` publisher behind `Shared.publisher`: the current value on subscribe, then
/// each change, in mutation order.
struct SharedPublisher<Value: Sendable>: Publisher {
  typealias Output = Value
  typealias Failure = Never

  let reference: any ReaderReference<Value>

  func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
    let subscription = SharedPublisherSubscription(reference: reference, downstream: subscriber)
    subscriber.receive(subscription: subscription)
  }
}

/// One subscriber's connection to a shared value.
///
/// The reference's drainer calls `offer` with each value, one call at a time. With unlimited
/// demand (the common case: `sink`) a value goes straight to the subscriber: one atomic load,
/// no lock. With finite demand, values wait in `State.buffer` (only the newest is kept while
/// the subscriber asks for nothing) and are handed over by whichever thread holds
/// `State.delivering`.
final class SharedPublisherSubscription<Value: Sendable, Downstream: Subscriber>: Subscription,
  ValueReceiver, @unchecked Sendable
where Downstream.Input == Value, Downstream.Failure == Never {
  // @unchecked: `downstream` is only called by the thread that holds `delivering` in `state`
  // (a Mutex), or on the fast path by the reference's drainer, which is one thread at a time
  // and runs only while nobody holds `delivering`. Everything mutable lives in `state`.

  private struct State {
    var demand = Subscribers.Demand.none
    var buffer: [Value] = []
    var delivering = false
    var registered = false
    var cancelled = false
    var token: ListenerToken?
  }

  private let reference: any ReaderReference<Value>
  private let downstream: Downstream
  private let state = Lock(State())
  /// Demand is unlimited, nothing is buffered and nobody holds `delivering`.
  private let fast = Atomic<Bool>(false)

  init(reference: any ReaderReference<Value>, downstream: Downstream) {
    self.reference = reference
    self.downstream = downstream
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else {
      reportIssue("A subscriber of Shared.publisher requested \(demand); demand must be > 0.")
      return
    }
    let (register, first) = state.withLock { state -> (Bool, Value?) in
      guard !state.cancelled else { return (false, nil) }
      state.demand += demand
      if !state.registered {
        state.registered = true
        if state.demand == .unlimited { fast.store(true, ordering: .releasing) }
        return (true, nil)
      }
      guard !state.delivering, !state.buffer.isEmpty else { return (false, nil) }
      state.delivering = true
      state.demand -= 1
      return (false, state.buffer.removeFirst())
    }
    if register {
      // The listener's first delivery is the current value.
      let token = reference.addReceiver(self)
      let cancelled = state.withLock { state -> Bool in
        if !state.cancelled { state.token = token }
        return state.cancelled
      }
      if cancelled { token.cancel() }
    }
    if let first { deliver(first) }
  }

  func offer(_ value: Value) {
    if fast.load(ordering: .acquiring) {
      _ = downstream.receive(value)
      return
    }
    offerSlowly(value)
  }

  /// Kept apart from `offer` so the fast path stays free of the generic metadata this needs.
  @inline(never)
  private func offerSlowly(_ value: Value) {
    let next = state.withLock { state -> Value? in
      if state.cancelled { return nil }
      if state.delivering {
        state.buffer.append(value)
        return nil
      }
      guard state.demand > 0 else {
        state.buffer = [value]  // no demand: keep only the newest
        return nil
      }
      state.demand -= 1
      state.delivering = true
      return value
    }
    if let next { deliver(next) }
  }

  /// Hands `first` and then whatever the demand allows to the subscriber; the caller holds
  /// `delivering`.
  private func deliver(_ first: Value) {
    var next: Value? = first
    while let value = next {
      let more = downstream.receive(value)
      next = state.withLock { state -> Value? in
        state.demand += more
        if !state.cancelled, !state.buffer.isEmpty, state.demand > 0 {
          state.demand -= 1
          return state.buffer.removeFirst()
        }
        state.delivering = false
        if !state.cancelled, state.demand == .unlimited, state.buffer.isEmpty {
          fast.store(true, ordering: .releasing)
        }
        return nil
      }
    }
  }

  func cancel() {
    fast.store(false, ordering: .releasing)
    let token = state.withLock { state -> ListenerToken? in
      state.cancelled = true
      state.buffer = []
      defer { state.token = nil }
      return state.token
    }
    token?.cancel()
  }
}
