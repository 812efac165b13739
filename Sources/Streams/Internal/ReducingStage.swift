import TetherSupport

/// The stage behind the operators that reduce a whole stream to at most one value: `reduce`,
/// `tryReduce`, `last`, `contains`, `count`, `min`/`max`, `allSatisfy` and `ignoreOutput`.
///
/// It asks upstream for everything at once (the result depends on every element), folds each
/// element into `result` with `step`, and publishes the result when upstream finishes or
/// `step` decides early (`contains` found a match), as soon as the subscriber has asked for
/// a value. `result` is only touched in `receive` calls, which the upstream serialises, and
/// in `deliverResult`, which runs once, after `control` handed the finished result over.
@usableFromInline
final class ReducingStage<Input, UpstreamFailure: Error, Downstream: Subscriber>: Subscriber,
  Subscription, @unchecked Sendable
{
  // @unchecked: `control` is a `Lock` Mutex; `result` and `isDone` are written only in the
  // serialised `receive` calls and read by `deliverResult` after `control` marked the result
  // ready (the lock orders the write before the read); `step` and `convert` are immutable.
  @usableFromInline typealias Failure = UpstreamFailure
  @usableFromInline typealias Output = Downstream.Input

  @usableFromInline let downstream: Downstream
  /// Folds one element into the result; `true` ends the stream early.
  @usableFromInline let step: (inout Output?, Input) throws(Downstream.Failure) -> Bool
  @usableFromInline let convert: (UpstreamFailure) -> Downstream.Failure
  @usableFromInline let control = Lock(unchecked: ReducingControl())
  @usableFromInline var result: Output?
  @usableFromInline var isDone = false

  @inlinable init(
    downstream: Downstream, initial: Output?,
    convert: @escaping (UpstreamFailure) -> Downstream.Failure,
    step: @escaping (inout Output?, Input) throws(Downstream.Failure) -> Bool
  ) {
    self.downstream = downstream
    self.result = initial
    self.convert = convert
    self.step = step
  }

  @inlinable func receive(subscription: any Subscription) {
    let kept = control.withLockUnchecked { control in
      guard !control.isOver, case .awaiting = control.upstream else { return false }
      control.upstream = .subscribed(subscription)
      return true
    }
    guard kept else {
      subscription.cancel()
      return
    }
    downstream.receive(subscription: self)
    if !control.withLockUnchecked({ $0.isOver }) { subscription.request(.unlimited) }
  }

  @inlinable func receive(_ input: Input) -> Subscribers.Demand {
    guard !isDone else { return .none }
    do throws(Downstream.Failure) {
      guard try step(&result, input) else { return .none }
      isDone = true
      cancelUpstream()
      finish()
    } catch {
      isDone = true
      cancelUpstream()
      fail(error)
    }
    return .none
  }

  @inlinable func receive(completion: Subscribers.Completion<UpstreamFailure>) {
    guard !isDone else { return }
    isDone = true
    control.withLockUnchecked { $0.upstream = .terminal }
    switch completion {
    case .finished: finish()
    case .failure(let error): fail(convert(error))
    }
  }

  @inlinable func request(_ demand: Subscribers.Demand) {
    guard demand > .none else { return }
    let deliver = control.withLockUnchecked { control -> Bool in
      guard !control.isOver else { return false }
      control.hasDemand = true
      guard control.isResultReady else { return false }
      control.isResultReady = false
      control.isOver = true
      return true
    }
    if deliver { deliverResult() }
  }

  @inlinable func cancel() {
    let upstream = control.withLockUnchecked { control -> (any Subscription)? in
      defer {
        control.isOver = true
        control.isCancelled = true
        control.isResultReady = false
        control.upstream = .terminal
      }
      guard case .subscribed(let subscription) = control.upstream else { return nil }
      return subscription
    }
    upstream?.cancel()
  }

  @inlinable func cancelUpstream() {
    let upstream = control.withLockUnchecked { control -> (any Subscription)? in
      defer { control.upstream = .terminal }
      guard case .subscribed(let subscription) = control.upstream else { return nil }
      return subscription
    }
    upstream?.cancel()
  }

  /// Publishes the result now if the subscriber asked for it, or when it does.
  @inlinable func finish() {
    let hasResult = result != nil
    let deliver = control.withLockUnchecked { control -> Bool in
      guard !control.isOver else { return false }
      if hasResult && !control.hasDemand {
        control.isResultReady = true
        return false
      }
      control.isOver = true
      return true
    }
    if deliver { deliverResult() }
  }

  @inlinable func fail(_ error: Downstream.Failure) {
    let live = control.withLockUnchecked { control -> Bool in
      defer { control.isOver = true }
      return !control.isOver
    }
    if live { downstream.receive(completion: .failure(error)) }
  }

  @inlinable func deliverResult() {
    if let value = result {
      result = nil
      _ = downstream.receive(value)
      // The subscriber may have cancelled while receiving the result.
      if control.withLockUnchecked({ $0.isCancelled }) { return }
    }
    downstream.receive(completion: .finished)
  }
}

/// The lock-protected bookkeeping of a `ReducingStage`, kept apart from its generic types.
@usableFromInline
struct ReducingControl {
  @usableFromInline var upstream = SubscriptionStatus.awaiting
  /// The subscriber asked for at least one value.
  @usableFromInline var hasDemand = false
  /// Upstream is done and the result waits for demand.
  @usableFromInline var isResultReady = false
  /// The completion was sent or the subscriber cancelled.
  @usableFromInline var isOver = false
  @usableFromInline var isCancelled = false

  @inlinable init() {}
}
