import Foundation

/// Where Tether sends the programmer errors it detects (a continuation resumed twice or never,
/// a key used with two value types, ...). Misuse is reported, never crashed on.
///
/// By default a report is printed to standard error. `TetherTesting` installs an observer for
/// the duration of an operation so tests can assert on reports.
package enum IssueReporting {
  /// Receives every report made while it is installed, in addition to the standard error print.
  package typealias Observer = @Sendable (_ message: String) -> Void

  /// The observer for the current task, if any.
  @TaskLocal package static var observer: Observer?
}

/// Reports a programmer error: prints it to standard error and hands it to `observer`.
///
/// Pass the observer captured when the misused object was created (reports may come from
/// another thread, outside the task that created it); it defaults to the current task's.
func reportIssue(
  _ message: String, observer: IssueReporting.Observer? = IssueReporting.observer,
  fileID: StaticString = #fileID, line: UInt = #line
) {
  FileHandle.standardError.write(Data("Tether: \(message)\n".utf8))
  observer?(message)
}
