import TetherSupport

extension AsyncSequence where Self: Sendable, Element: Sendable {
  /// A publisher that iterates this asynchronous sequence as subscribers ask for elements.
  ///
  /// Each subscriber gets its own iteration, in its own task, started at its first demand.
  /// The task waits whenever demand runs out, and cancelling the subscription cancels the
  /// task. The sequence's error, if it throws, fails the stream.
  ///
  /// ```swift
  /// let cancellable = stream.publisher.sink { print($0) }
  /// ```
  public var publisher: Publishers.AsyncSequencePublisher<Self> {
    Publishers.AsyncSequencePublisher(self)
  }
}

extension Publishers {
  /// A publisher that republishes the elements of an `AsyncSequence`, honouring demand.
  public struct AsyncSequencePublisher<Base: AsyncSequence & Sendable>: Publisher, Sendable
  where Base.Element: Sendable {
    /// The sequence's elements.
    public typealias Output = Base.Element
    /// The sequence's error type (`Never` for `AsyncStream`).
    public typealias Failure = Base.Failure

    /// The sequence to iterate, once per subscriber.
    public let base: Base

    /// Creates a publisher for an asynchronous sequence.
    public init(_ base: Base) { self.base = base }

    /// Attaches the subscriber; the iteration starts at its first demand.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      subscriber.receive(
        subscription: AsyncSequenceSubscription(base: base, downstream: subscriber))
    }
  }
}

/// Something a task can run without knowing its generic parameters.
private protocol AsyncRunner: Sendable {
  func run() async
}

/// Runs one subscriber's iteration in a task that waits for demand before each element.
private final class AsyncSequenceSubscription<Base: AsyncSequence & Sendable, S: Subscriber>:
  Subscription, AsyncRunner, @unchecked Sendable
where S.Input == Base.Element, S.Failure == Base.Failure, Base.Element: Sendable {
  // @unchecked: every stored property except the immutable `base` lives in `state`, a Mutex.
  private struct State {
    var downstream: S?
    var demand: Subscribers.Demand = .none
    var task: Task<Void, Never>?
    var waiter: CheckedContinuation<Bool, Never>?
  }

  private let base: Base
  private let state: Lock<State>

  init(base: Base, downstream: S) {
    self.base = base
    state = Lock(unchecked: State(downstream: downstream))
  }

  func request(_ demand: Subscribers.Demand) {
    guard demand > 0 else { return }
    let (start, waiter): (Bool, CheckedContinuation<Bool, Never>?) = state.withLockUnchecked {
      state in
      guard state.downstream != nil else { return (false, nil) }
      state.demand += demand
      let waiter = state.waiter
      state.waiter = nil
      return (state.task == nil, waiter)
    }
    waiter?.resume(returning: true)
    if start {
      // Erased so that the task does not capture the subscriber's (non-Sendable) metatype.
      let runner: any AsyncRunner = self
      let task = Task { await runner.run() }
      let cancelled = state.withLockUnchecked { state in
        guard state.downstream != nil else { return true }
        state.task = task
        return false
      }
      if cancelled { task.cancel() }
    }
  }

  func cancel() {
    let (task, waiter, downstream) = state.withLockUnchecked { state in
      defer { state = State(downstream: nil, task: state.task) }
      return (state.task, state.waiter, state.downstream)
    }
    task?.cancel()
    waiter?.resume(returning: false)
    _ = downstream
  }

  /// Waits until there is demand; returns the subscriber, or `nil` once cancelled.
  private func nextDelivery() async -> S? {
    while true {
      let (downstream, mustWait): (S?, Bool) = state.withLockUnchecked { state in
        guard let downstream = state.downstream, !Task.isCancelled else { return (nil, false) }
        guard state.demand > 0 else { return (nil, true) }
        state.demand -= 1
        return (downstream, false)
      }
      if let downstream { return downstream }
      guard mustWait else { return nil }
      let resumed = await withCheckedContinuation { continuation in
        let resumeNow = state.withLockUnchecked { state in
          guard state.downstream != nil, state.demand == .none else { return true }
          state.waiter = continuation
          return false
        }
        if resumeNow { continuation.resume(returning: true) }
      }
      _ = resumed
    }
  }

  func run() async {
    var iterator = base.makeAsyncIterator()
    do {
      while let downstream = await nextDelivery() {
        guard let element = try await iterator.next(isolation: nil) else {
          finish(.finished)
          return
        }
        // The subscriber may have cancelled while the sequence was producing the element.
        guard state.withLockUnchecked({ $0.downstream != nil }) else { return }
        let more = downstream.receive(element)
        if more > 0 { state.withLockUnchecked { $0.demand += more } }
      }
    } catch {
      finish(.failure(error))
    }
  }

  private func finish(_ completion: Subscribers.Completion<S.Failure>) {
    let downstream = state.withLockUnchecked { state in
      defer { state = State() }
      return state.downstream
    }
    downstream?.receive(completion: completion)
  }
}
