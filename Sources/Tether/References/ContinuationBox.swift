import Streams
import Synchronization
import TetherSupport

/// The once-only heart of `LoadContinuation` and `SaveContinuation`.
///
/// Resuming twice is reported and ignored. A box destroyed without being resumed reports
/// the leak and resumes with `ContinuationNotResumed`, so whoever waits is not stuck forever.
final class ContinuationBox<Outcome: Sendable>: Sendable {
  private let callback: Lock<(@Sendable (Outcome) -> Void)?>
  /// Names the continuation in reports; computed only when one is made (a type name costs
  /// about a microsecond to format).
  private let name: @Sendable () -> String
  private let observer: IssueReporting.Observer?
  private let abandoned: @Sendable () -> Outcome

  init(
    name: @escaping @Sendable () -> String, observer: IssueReporting.Observer?,
    abandoned: @escaping @Sendable () -> Outcome,
    callback: @escaping @Sendable (Outcome) -> Void
  ) {
    self.callback = Lock(callback)
    self.name = name
    self.observer = observer
    self.abandoned = abandoned
  }

  /// Delivers `outcome` the first time; reports later calls at the caller's `fileID`/`line`.
  func resume(_ outcome: Outcome, fileID: StaticString, line: UInt) {
    guard let callback = take() else {
      reportIssue(
        "\(name()) was resumed more than once; the extra result is ignored.",
        observer: observer, fileID: fileID, line: line)
      return
    }
    callback(outcome)
  }

  private func take() -> (@Sendable (Outcome) -> Void)? {
    callback.withLock { callback in
      defer { callback = nil }
      return callback
    }
  }

  deinit {
    guard let callback = take() else { return }
    reportIssue("\(name()) was never resumed; treating it as a failure.", observer: observer)
    callback(abandoned())
  }
}

/// The error a load or save reports when its key dropped the continuation without resuming it.
struct ContinuationNotResumed: Error, CustomStringConvertible {
  var description: String { "The key never resumed its continuation." }
}
