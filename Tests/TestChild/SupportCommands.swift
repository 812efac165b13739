import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child command: receives its arguments, runs, and exits 0 unless it throws.
typealias ChildCommand = @Sendable ([String]) async throws -> Void

/// Commands that exercise the process helper itself (`ChildProcess` in TestSupport).
///
/// - `echo WORDS...`: prints the words on one line.
/// - `echo-lines`: prints `ready`, then echoes each stdin line until stdin closes.
/// - `lines N`: prints `line 1` … `line N`.
/// - `exit CODE`: exits with `CODE`.
/// - `fail MESSAGE CODE`: writes `MESSAGE` to stderr and exits with `CODE`.
/// - `wait-for-signal [--ignore-term]`: prints `ready`, then waits until a signal ends it;
///   with `--ignore-term`, SIGTERM is ignored so only SIGKILL works.
let supportCommands: [String: ChildCommand] = [
  "echo": { arguments in emitLine(arguments.joined(separator: " ")) },
  "echo-lines": { _ in
    emitLine("ready")
    while let line = readLine(strippingNewline: true) { emitLine(line) }
  },
  "lines": { arguments in
    let count: Int = arguments.first.flatMap { Int($0) } ?? 0
    for number in 0..<count { emitLine("line \(number + 1)") }
  },
  "exit": { arguments in
    exit(arguments.first.flatMap { Int32($0) } ?? 0)
  },
  "fail": { arguments in
    FileHandle.standardError.write(Data("\(arguments.first ?? "failed")\n".utf8))
    exit(arguments.dropFirst().first.flatMap { Int32($0) } ?? 1)
  },
  "wait-for-signal": { arguments in
    if arguments.contains("--ignore-term") { signal(SIGTERM, SIG_IGN) }
    emitLine("ready")
    // Blocks until a signal terminates the process; not a timed wait.
    while true { pause() }
  },
]

/// Writes `line` to stdout unbuffered, so the parent sees it at once.
private func emitLine(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
