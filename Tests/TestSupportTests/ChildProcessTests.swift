import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct ChildProcessTests {
  @Test func echoesLinesRoundTrip() async throws {
    let child = try ChildProcess("echo-lines")
    try await child.waitForLine("ready")

    try child.send(line: "hello")
    #expect(try await child.nextLine() == "hello")
    try child.send(line: "second line")
    try child.send(line: "third")
    #expect(try await child.nextLine() == "second line")
    #expect(try await child.nextLine() == "third")

    child.closeInput()
    #expect(try await child.waitForExit() == .exited(0))
    #expect(child.outputLines == ["ready", "hello", "second line", "third"])
  }

  @Test func passesArgumentsAndSkipsLinesUntilOneMatches() async throws {
    let child = try ChildProcess("lines", "5")
    let line = try await child.waitForLine(containing: "4")
    #expect(line == "line 4")
    #expect(try await child.nextLine() == "line 5")
  }

  @Test func reportsTheExitCode() async throws {
    let child = try ChildProcess("exit", "3")
    let status = try await child.waitForExit()
    #expect(status == .exited(3))
    #expect(!status.isSuccess)
    #expect(!child.isRunning)
  }

  @Test func capturesStandardError() async throws {
    let child = try ChildProcess("fail", "disk on fire", "4")
    #expect(try await child.waitForExit() == .exited(4))
    #expect(child.standardError == "disk on fire\n")
  }

  @Test func sigkillEndsAChildThatIgnoresSIGTERM() async throws {
    let child = try ChildProcess("wait-for-signal", "--ignore-term")
    try await child.waitForLine("ready")

    child.terminate()
    // SIGTERM is ignored: the child is still there, so the wait times out.
    await #expect(throws: TimeoutError.self) {
      try await child.waitForExit(timeout: .milliseconds(200))
    }
    #expect(child.isRunning)

    child.kill(signal: SIGKILL)
    #expect(try await child.waitForExit() == .signaled(SIGKILL))
  }

  @Test func terminateSendsSIGTERM() async throws {
    let child = try ChildProcess("wait-for-signal")
    try await child.waitForLine("ready")
    child.terminate()
    #expect(try await child.waitForExit() == .signaled(SIGTERM))
  }

  @Test func nextLineTimesOutWithAClearError() async throws {
    let child = try ChildProcess("wait-for-signal")
    try await child.waitForLine("ready")
    let error = await #expect(throws: TimeoutError.self) {
      try await child.nextLine(timeout: .milliseconds(100))
    }
    #expect(error?.description.contains("a line from `tether-test-child wait-for-signal`") == true)
    #expect(error?.description.contains("ready") == true)  // the recent output is shown
    child.kill()
  }

  @Test func waitForLineFailsWhenTheOutputEnds() async throws {
    let child = try ChildProcess("fail", "no such key", "1")
    let error = await #expect(throws: ChildProcessError.self) {
      try await child.waitForLine("never printed")
    }
    #expect(error?.description.contains("no such key") == true)
  }

  @Test func writingToAChildThatExitedThrows() async throws {
    let child = try ChildProcess("exit", "0")
    try await child.waitForExit()
    #expect(throws: ChildProcessError.self) {
      for _ in 0..<100 { try child.send(line: String(repeating: "x", count: 1000)) }
    }
  }

  @Test func cancellingTheWaitingTaskEndsTheWait() async throws {
    let child = try ChildProcess("wait-for-signal")
    try await child.waitForLine("ready")
    let waiter = Task { try await child.nextLine(timeout: .seconds(30)) }
    waiter.cancel()
    await #expect(throws: CancellationError.self) { try await waiter.value }
    child.kill()
  }

  @Test func reportsAMissingExecutableWithThePathsTried() throws {
    #expect(throws: (any Error).self) {
      _ = try ChildProcess(["echo"], executableURL: URL(fileURLWithPath: "/nonexistent/child"))
    }
    let url = try ChildProcess.locateExecutable()
    #expect(url.lastPathComponent == ChildProcess.executableName)
  }
}
