import Foundation
import TetherSupport

extension Timer {
  /// Returns a publisher that repeatedly emits the current date on the given interval, from a
  /// Foundation `Timer` on `runLoop`: Combine's spelling, for code that ports unchanged.
  ///
  /// The publisher is connectable: nothing happens until `connect()`, or use
  /// `autoconnect()`. The run loop must be running (on Linux, nothing runs the main run loop
  /// unless your program does); for a timer that needs no run loop use
  /// `Publishers.Interval` on a `DispatchQueue`.
  ///
  /// ```swift
  /// Timer.publish(every: 1, on: .main, in: .common).autoconnect().sink { print($0) }
  /// ```
  public static func publish(
    every interval: TimeInterval, tolerance: TimeInterval? = nil, on runLoop: RunLoop,
    in mode: RunLoop.Mode, options: RunLoop.TimerOptions? = nil
  ) -> Timer.TimerPublisher {
    TimerPublisher(
      interval: interval, tolerance: tolerance, runLoop: runLoop, mode: mode, options: options)
  }

  /// A connectable publisher that emits the current date from a repeating `Timer`.
  public final class TimerPublisher: ConnectablePublisher {
    /// Each tick publishes the date it fired.
    public typealias Output = Date
    /// A timer never fails.
    public typealias Failure = Never

    /// The time between ticks, in seconds.
    public let interval: TimeInterval
    /// How late a tick may be, in seconds.
    public let tolerance: TimeInterval?
    /// The run loop the timer is added to.
    public let runLoop: RunLoop
    /// The run loop mode the timer runs in.
    public let mode: RunLoop.Mode
    /// Options (none are defined; kept for Combine's signature).
    public let options: RunLoop.TimerOptions?

    private let ticks = PassthroughSubject<Date, Never>()

    /// Creates a publisher for a timer on `runLoop` in `mode`; see
    /// `Timer.publish(every:tolerance:on:in:options:)`.
    public init(
      interval: TimeInterval, tolerance: TimeInterval? = nil, runLoop: RunLoop,
      mode: RunLoop.Mode, options: RunLoop.TimerOptions? = nil
    ) {
      self.interval = interval
      self.tolerance = tolerance
      self.runLoop = runLoop
      self.mode = mode
      self.options = options
    }

    /// Attaches the subscriber to the ticks; it receives those after it subscribed, while
    /// the timer is connected and it has demand.
    public func receive<S: Subscriber>(subscriber: S)
    where S.Input == Output, S.Failure == Failure {
      ticks.subscribe(subscriber)
    }

    /// Starts the timer on the run loop; cancelling the result invalidates it.
    public func connect() -> any Cancellable {
      let ticks = ticks
      let timer = Timer(timeInterval: interval, repeats: true) { _ in ticks.send(Date()) }
      if let tolerance { timer.tolerance = tolerance }
      runLoop.add(timer, forMode: mode)
      return TimerConnection(timer)
    }
  }
}

/// Invalidates a connected timer, once.
final class TimerConnection: Cancellable {
  /// `Timer` is not `Sendable`; it is taken out under the lock and invalidated once
  /// (invalidation is thread-safe in swift-corelibs-foundation: it goes through
  /// `CFRunLoopTimerInvalidate`, which locks the timer).
  private let timer: Lock<Timer?>

  init(_ timer: Timer) { self.timer = Lock(unchecked: timer) }

  func cancel() {
    let timer = timer.withLockUnchecked { timer in
      defer { timer = nil }
      return timer
    }
    timer?.invalidate()
  }
}

extension RunLoop {
  /// Options for `Timer.publish(every:tolerance:on:in:options:)`; none are
  /// defined (Combine's `RunLoop.SchedulerOptions` has none either).
  public struct TimerOptions: Sendable {
    /// Creates the empty options.
    public init() {}
  }
}
