import TetherSupport

/// A publisher that eventually produces a single value and then finishes, or fails.
///
/// The closure runs once, when the future is created, and receives a promise to fulfil from
/// any thread. Every subscriber, also one that subscribes after the promise was fulfilled,
/// receives the same result: the value as soon as it has demand, then `.finished`; or the
/// failure at once. Fulfilling a promise a second time has no effect.
///
/// ```swift
/// let answer = Future<Int, Never> { promise in
///   DispatchQueue.global().async { promise(.success(42)) }
/// }
/// ```
public final class Future<Output, Failure: Error>: Publisher {
  /// The closure a future's producer calls with its result.
  public typealias Promise = @Sendable (Result<Output, Failure>) -> Void

  private struct State {
    var result: Result<Output, Failure>?
    var waiting: [FutureWaiter<Output, Failure>] = []
  }

  private let state = Lock(unchecked: State())

  /// Creates a publisher that runs `attemptToFulfill` at once with a promise to fulfil.
  public init(_ attemptToFulfill: @escaping (@escaping Promise) -> Void) {
    let box = FutureBox(self)
    attemptToFulfill { result in box.future.fulfill(result) }
  }

  private func fulfill(_ result: Result<Output, Failure>) {
    let waiting: [FutureWaiter<Output, Failure>]? = state.withLockUnchecked { state in
      guard state.result == nil else { return nil }
      state.result = result
      defer { state.waiting = [] }
      return state.waiting
    }
    for waiter in waiting ?? [] { waiter.fulfill(result) }
  }

  /// Attaches the subscriber; it receives the result once available and demanded.
  public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
    let subscription = FutureSubscription(downstream: subscriber)
    let result: Result<Output, Failure>? = state.withLockUnchecked { state in
      if state.result == nil { state.waiting.append(subscription) }
      return state.result
    }
    subscriber.receive(subscription: subscription)
    if let result { subscription.fulfill(result) }
  }
}

// @unchecked: the result and the waiting subscriptions live in `state`, a Mutex; the result
// crosses threads, hence the requirement that `Output` be Sendable.
extension Future: @unchecked Sendable where Output: Sendable {}

/// Lets the promise keep the future alive until it is fulfilled, so that
/// `Future { ... }.sink { ... }` delivers although nobody else holds the future.
private final class FutureBox<Output, Failure: Error>: @unchecked Sendable {
  // @unchecked: `future` is immutable, and `Future` keeps its state in a Mutex.
  let future: Future<Output, Failure>
  init(_ future: Future<Output, Failure>) { self.future = future }
}

/// A subscription waiting for a future's result.
class FutureWaiter<Output, Failure: Error>: @unchecked Sendable {
  // @unchecked: no stored state; the subclass keeps its state in a Mutex.
  func fulfill(_ result: Result<Output, Failure>) {}
}

private final class FutureSubscription<S: Subscriber>: FutureWaiter<S.Input, S.Failure>,
  Subscription, @unchecked Sendable
{
  // @unchecked: every stored property lives in `state`, a Mutex.
  private struct State {
    var downstream: S?
    var result: Result<S.Input, S.Failure>?
    var hasDemand = false
    var isCancelled = false
  }

  private let state: Lock<State>

  init(downstream: S) { state = Lock(unchecked: State(downstream: downstream)) }

  override func fulfill(_ result: Result<S.Input, S.Failure>) {
    deliver { $0.result = result }
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    deliver { $0.hasDemand = true }
  }

  func cancel() {
    let downstream = state.withLockUnchecked { state in
      defer { state = State(isCancelled: true) }
      return state.downstream
    }
    _ = downstream
  }

  /// Applies `change`, then delivers if the result is there and may be sent.
  private func deliver(after change: (inout State) -> Void) {
    let ready: (S, Result<S.Input, S.Failure>)? = state.withLockUnchecked { state in
      change(&state)
      guard let downstream = state.downstream, let result = state.result else { return nil }
      if case .success = result, !state.hasDemand { return nil }
      state = State()
      return (downstream, result)
    }
    guard let (downstream, result) = ready else { return }
    switch result {
    case .success(let value):
      _ = downstream.receive(value)
      // The subscriber may have cancelled while receiving the value.
      if !state.withLockUnchecked({ $0.isCancelled }) { downstream.receive(completion: .finished) }
    case .failure(let error):
      downstream.receive(completion: .failure(error))
    }
  }
}
