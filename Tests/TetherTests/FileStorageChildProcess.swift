import Foundation
import Synchronization

/// A running `tether-test-child` for the cross-process file tests: its output lines arrive
/// in `lines`, its input can be closed, and it can be killed.
///
/// (A minimal local helper until the shared TestSupport process helper lands.)
final class FileTestChild: Sendable {
  let lines = EventLog<String>()
  let exitStatus = EventLog<Int32>()
  private let process: Process
  private let input: Pipe
  private let output: Pipe
  private let pending = Mutex(Data())

  /// Launches `tether-test-child` with `arguments`.
  init(_ arguments: [String]) throws {
    process = Process()
    input = Pipe()
    output = Pipe()
    process.executableURL = Self.executable
    process.arguments = arguments
    process.standardInput = input
    process.standardOutput = output
    output.fileHandleForReading.readabilityHandler = { [weak self] handle in
      let data = handle.availableData
      guard let self else { return }
      let complete = self.pending.withLock { buffer -> [String] in
        buffer.append(data)
        var result: [String] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
          result.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
          buffer.removeSubrange(buffer.startIndex...newline)
        }
        return result
      }
      complete.forEach(self.lines.append)
      if data.isEmpty { handle.readabilityHandler = nil }
    }
    let exitStatus = self.exitStatus
    process.terminationHandler = { exitStatus.append($0.terminationStatus) }
    try process.run()
  }

  /// The child executable, built next to the test bundle.
  static var executable: URL {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("tether-test-child")
  }

  var processIdentifier: Int32 { process.processIdentifier }

  /// Waits for an output line equal to `line` (or starting with it, with `prefix`).
  @discardableResult
  func waitForLine(
    _ line: String, prefix: Bool = false, timeout: Duration = .seconds(10)
  ) async
    -> Bool
  {
    await lines.wait(timeout: timeout) { lines in
      lines.contains { prefix ? $0.hasPrefix(line) : $0 == line }
    }
  }

  /// Closes the child's standard input (the hold and read-loop commands then finish).
  func closeInput() {
    try? input.fileHandleForWriting.close()
  }

  /// Sends SIGKILL.
  func kill() {
    _ = Foundation.kill(process.processIdentifier, SIGKILL)
  }

  /// Waits for the child to exit and returns its status, or `nil` after the timeout.
  func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
    guard await exitStatus.wait(timeout: timeout, until: { !$0.isEmpty }) else { return nil }
    return exitStatus.events.first
  }

  deinit {
    if process.isRunning { _ = Foundation.kill(process.processIdentifier, SIGKILL) }
  }
}
