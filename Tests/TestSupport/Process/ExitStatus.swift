/// How a child process ended.
public enum ExitStatus: Sendable, Hashable, CustomStringConvertible {
  /// It called `exit` (or returned from `main`) with this code.
  case exited(Int32)
  /// A signal ended it, such as `SIGKILL` (9) or `SIGTERM` (15).
  case signaled(Int32)

  /// Whether it exited with code 0.
  public var isSuccess: Bool { self == .exited(0) }

  /// A description such as `exited with code 3` or `killed by signal 9`.
  public var description: String {
    switch self {
    case .exited(let code): "exited with code \(code)"
    case .signaled(let signal): "killed by signal \(signal)"
    }
  }
}
