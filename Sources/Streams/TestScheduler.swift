import Dispatch
import Synchronization
import TetherSupport

/// A scheduler whose clock only moves when a test moves it, so time-based operators can be
/// tested against exact timelines without sleeping.
///
/// Scheduled actions run on the thread that calls ``advance(by:)``, ``advance(to:)`` or
/// ``run()``, in order of their due time; actions due at the same instant run in the order
/// they were scheduled. An action scheduled for "now" (``schedule(options:_:)``) runs on the
/// next advance, even `advance()` by zero. The clock uses `DispatchQueue`'s time and stride
/// types, so code written for a `DispatchQueue` time type accepts a test scheduler too:
///
/// ```swift
/// let scheduler = TestScheduler()
/// let subject = PassthroughSubject<Int, Never>()
/// let cancellable = subject
///   .debounce(for: .seconds(1), scheduler: scheduler)
///   .sink { print($0) }
/// subject.send(1)
/// scheduler.advance(by: .milliseconds(999))  // prints nothing yet
/// scheduler.advance(by: .milliseconds(1))  // prints 1
/// ```
///
/// A test scheduler is thread-safe: actions may be scheduled from any thread.
public final class TestScheduler: Scheduler {
  /// The test scheduler's time type, shared with `DispatchQueue`.
  public typealias SchedulerTimeType = DispatchQueue.SchedulerTimeType
  /// The test scheduler's options, shared with `DispatchQueue` and ignored.
  public typealias SchedulerOptions = DispatchQueue.SchedulerOptions

  private struct ScheduledAction {
    /// Stable identity, for cancelling a repeating action.
    let id: UInt64
    /// Insertion order, which breaks ties between actions due at the same instant.
    let sequence: UInt64
    let date: SchedulerTimeType
    let interval: SchedulerTimeType.Stride?
    let action: @Sendable () -> Void

    func runsBefore(_ other: ScheduledAction) -> Bool {
      date < other.date || (date == other.date && sequence < other.sequence)
    }
  }

  private struct State {
    var now: SchedulerTimeType
    var nextSequence: UInt64 = 0
    /// Pending actions, the one due last first, so the next one to run is `last`.
    var scheduled: [ScheduledAction] = []

    mutating func enqueue(
      _ date: SchedulerTimeType, interval: SchedulerTimeType.Stride?, id: UInt64? = nil,
      _ action: @escaping @Sendable () -> Void
    ) -> UInt64 {
      let sequence = nextSequence
      nextSequence += 1
      let scheduledAction = ScheduledAction(
        id: id ?? sequence, sequence: sequence, date: date, interval: interval, action: action)
      // Binary search for the first pending action that runs before the new one.
      var low = 0
      var high = scheduled.count
      while low < high {
        let middle = (low + high) / 2
        if scheduled[middle].runsBefore(scheduledAction) {
          high = middle
        } else {
          low = middle + 1
        }
      }
      scheduled.insert(scheduledAction, at: low)
      return scheduledAction.id
    }
  }

  private let state: Lock<State>

  /// Runs `body` with the state under the lock.
  private func withState<R: Sendable>(_ body: (inout State) -> R) -> R {
    state.withLockUnchecked { body(&$0) }
  }

  /// Creates a test scheduler whose clock starts at `now`.
  ///
  /// The default start is an arbitrary fixed instant, the same for every test scheduler.
  public init(now: SchedulerTimeType = SchedulerTimeType(DispatchTime(uptimeNanoseconds: 1))) {
    state = Lock(unchecked: State(now: now))
  }

  /// The scheduler's current virtual time.
  public var now: SchedulerTimeType {
    withState { $0.now }
  }

  /// The minimum tolerance allowed by the scheduler: zero.
  public var minimumTolerance: SchedulerTimeType.Stride { .nanoseconds(0) }

  /// Schedules the action to run at the current virtual time, on the next advance.
  public func schedule(options: SchedulerOptions?, _ action: @escaping @Sendable () -> Void) {
    withState { state in
      _ = state.enqueue(state.now, interval: nil, action)
    }
  }

  /// Schedules the action to run when the virtual clock reaches `date`.
  ///
  /// An action scheduled in the past runs on the next advance, without moving the clock back.
  public func schedule(
    after date: SchedulerTimeType,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) {
    withState { state in
      _ = state.enqueue(date, interval: nil, action)
    }
  }

  /// Schedules the action to run when the virtual clock reaches `date`, then every `interval`
  /// until the returned value is cancelled (or deinitialised).
  public func schedule(
    after date: SchedulerTimeType,
    interval: SchedulerTimeType.Stride,
    tolerance: SchedulerTimeType.Stride,
    options: SchedulerOptions?,
    _ action: @escaping @Sendable () -> Void
  ) -> any Cancellable {
    // A zero or negative interval would fire forever at one instant.
    let interval = Swift.max(interval, .nanoseconds(1))
    let id = withState { state in
      state.enqueue(date, interval: interval, action)
    }
    return AnyCancellable { [weak self] in
      self?.withState { state in
        state.scheduled.removeAll { $0.id == id }
      }
    }
  }

  /// Moves the clock forward by `stride`, running every action that falls due on the way, in
  /// order, with the clock set to each action's due time while it runs.
  ///
  /// `advance()` (by zero) runs the actions already due now.
  public func advance(by stride: SchedulerTimeType.Stride = .nanoseconds(0)) {
    advance(to: now.advanced(by: stride))
  }

  /// Moves the clock forward to `instant`, running every action that falls due on the way.
  ///
  /// An instant in the past leaves the clock where it is and runs the actions already due.
  public func advance(to instant: SchedulerTimeType) {
    while true {
      let action: (@Sendable () -> Void)? = withState { state in
        let deadline = Swift.max(instant, state.now)
        guard let due = state.scheduled.last, due.date <= deadline else {
          state.now = deadline
          return nil
        }
        state.scheduled.removeLast()
        state.now = Swift.max(state.now, due.date)
        if let interval = due.interval {
          // A repeating action goes behind the actions already due at its next instant.
          _ = state.enqueue(
            due.date.advanced(by: interval), interval: interval, id: due.id, due.action)
        }
        return due.action
      }
      guard let action else { return }
      action()
    }
  }

  /// Runs every pending one-shot action, including those that actions schedule, moving the
  /// clock to each due time in turn.
  ///
  /// Repeating actions run at each of their instants up to the last one-shot action's time;
  /// they do not keep `run()` from returning.
  public func run() {
    while let date = withState({ state in
      state.scheduled.filter { $0.interval == nil }.map(\.date).min()
    }) {
      advance(to: date)
    }
  }
}
