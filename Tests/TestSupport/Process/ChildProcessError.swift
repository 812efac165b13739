/// Why talking to a `ChildProcess` failed (a passed deadline is a `TimeoutError` instead).
public enum ChildProcessError: Error, CustomStringConvertible {
  /// The `tether-test-child` executable was not found; the paths that were tried.
  case executableNotFound(name: String, searched: [String])
  /// Standard output closed before the awaited line; what the child printed on stderr.
  case outputEnded(waitingFor: String, standardError: String)
  /// Writing to the child's standard input failed (it exited or closed its input).
  case inputClosed(underlying: String)

  /// A readable description for test failure messages.
  public var description: String {
    switch self {
    case .executableNotFound(let name, let searched):
      return "could not find the \(name) executable; searched:\n"
        + searched.map { "  \($0)" }.joined(separator: "\n")
        + "\nbuild it with `swift build --build-tests`, or set TETHER_TEST_CHILD to its path"
    case .outputEnded(let waitingFor, let standardError):
      return "the child's output ended while waiting for \(waitingFor)"
        + (standardError.isEmpty ? "" : "\nstderr:\n\(standardError)")
    case .inputClosed(let underlying):
      return "could not write to the child's standard input: \(underlying)"
    }
  }
}
