import Foundation
import TestSupport
import Testing

/// The runnable example of WritingACustomStrategy (`swift run custom-strategy`) does what the
/// article says, every step checked by the example itself: run it and expect success.
struct CustomStrategyExampleTests {
  @Test func theExampleRunsToTheEnd() async throws {
    let executable = try ChildProcess.locateExecutable().deletingLastPathComponent()
      .appendingPathComponent("custom-strategy")
    let example = try ChildProcess([], executableURL: executable)
    let status = try await example.waitForExit(timeout: .seconds(60))
    #expect(
      status.isSuccess, "\(example.outputLines.joined(separator: "\n"))\n\(example.standardError)")
    #expect(example.outputLines.last == "Done.")
    #expect(example.outputLines.contains { $0.hasPrefix("9. ") })
  }
}
