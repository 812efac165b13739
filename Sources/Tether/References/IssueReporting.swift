/// How Tether's reports of programmer errors reach the user's handler and test observers.
///
/// Every report goes to `TetherIssue.handler`. In addition, a test observer installed for a
/// task (by `TetherTesting`'s trait or `TetherIssueRecorder`) receives the reports of objects
/// created in that task: the observer is captured when the object is created, because reports
/// come later from other threads, outside the task.
package enum IssueReporting {
  /// Receives the reports of objects created while it is installed.
  package typealias Recorder = @Sendable (TetherIssue) -> Void

  /// The test observer for the current task, if any.
  @TaskLocal package static var recorder: Recorder?

  /// What an object captures when it is created: the current task's recorder and, once known,
  /// the key the object serves.
  package struct Observer: Sendable {
    /// The recorder of the task that created the object.
    package var recorder: Recorder?
    /// The key itself, described only when a report names it: describing every key up front
    /// cost each new reference a heap-allocated string (`.inMemory("…")` grown by appending),
    /// while a small key fits in the existential's inline buffer.
    var keyValue: (any Sendable)?

    /// The key the object serves, as reports name it.
    package var key: String? { keyValue.map { String(describing: $0) } }
  }

  /// The current task's observer, naming no key.
  package static var observer: Observer { Observer(recorder: recorder, keyValue: nil) }

  /// The current task's observer, naming `key` in its reports.
  static func observer(naming key: (any Sendable)?) -> Observer {
    Observer(recorder: recorder, keyValue: key)
  }
}

/// Reports a programmer error to `TetherIssue.handler` and to `observer`'s recorder.
///
/// Pass the observer captured when the misused object was created (reports may come from
/// another thread, outside the task that created it); it defaults to the current task's. Pass
/// the location of the user's code that misused Tether when it is known.
func reportIssue(
  _ message: String, observer: IssueReporting.Observer? = IssueReporting.observer,
  key: Any? = nil, fileID: StaticString? = nil, line: UInt? = nil
) {
  let issue = TetherIssue(
    message: message, key: key.map { String(describing: $0) } ?? observer?.key,
    fileID: fileID.map { "\($0)" }, line: line.map { Int($0) })
  TetherIssue.handler(issue)
  observer?.recorder?(issue)
}
