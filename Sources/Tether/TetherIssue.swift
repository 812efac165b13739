import Foundation
import Streams
import Synchronization
import TetherSupport

/// A programmer error Tether detected: a continuation resumed twice or never, a key shared with
/// two value types, a subscriber asking for no values.
///
/// Tether reports misuse instead of crashing. Each report names the key involved and, where
/// Tether knows it, the place in your code that misused it (the second `resume` call, for
/// example). Reports go to ``handler``, which prints them to standard error unless you route
/// them elsewhere; inside a Swift Testing test that uses `TetherTesting`'s
/// `.isolatedSharedState` trait, a report also fails the test.
///
/// ```swift
/// TetherIssue.handler = { issue in
///   logger.warning("\(issue)")   // e.g. a swift-log Logger, os.Logger, or your own
/// }
/// ```
public struct TetherIssue: Sendable, Equatable, CustomStringConvertible {
  /// What went wrong, in a sentence that names the fix where there is one.
  public var message: String
  /// A description of the key involved (`"\(key)"`), if the report concerns one.
  public var key: String?
  /// The file (`#fileID`) of the code that misused Tether, if known.
  public var fileID: String?
  /// The line of the code that misused Tether, if known.
  public var line: Int?

  /// Creates a report. Tether makes these; a test may make one to compare against.
  public init(message: String, key: String? = nil, fileID: String? = nil, line: Int? = nil) {
    self.message = message
    self.key = key
    self.fileID = fileID
    self.line = line
  }

  /// `file:line: message (key: …)`, the form the default handler prints after `Tether: `.
  public var description: String {
    var text = ""
    if let fileID, let line { text += "\(fileID):\(line): " }
    text += message
    if let key { text += " (key: \(key))" }
    return text
  }

  /// A function that receives Tether's reports.
  public typealias Handler = @Sendable (TetherIssue) -> Void

  /// Where Tether sends every report; by default ``printToStandardError``.
  ///
  /// Set it once at startup to route reports to your logger. It may be called from any thread,
  /// possibly concurrently, so it must be thread-safe. Reading and setting it are thread-safe.
  /// Test observers (`.isolatedSharedState`, `TetherIssueRecorder`) receive reports in
  /// addition to this handler.
  public static var handler: Handler {
    get { currentHandler.withLock { $0 } }
    set { currentHandler.withLock { $0 = newValue } }
  }

  /// The default handler: prints `Tether: <description>` to standard error.
  public static let printToStandardError: Handler = { issue in
    FileHandle.standardError.write(Data("Tether: \(issue)\n".utf8))
  }

  private static let currentHandler = Lock<Handler>(printToStandardError)
}
