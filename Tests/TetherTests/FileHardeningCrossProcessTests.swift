import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Tether

/// Hardening rules that need a second real process (`tether-test-child`): another umask,
/// another user, and two processes taking turns on one file under CPU load.
@Suite(.heavy) struct FileHardeningCrossProcessTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory(prefix: "tether-hardening") }

  /// Runs the child and returns its last line.
  func run(_ arguments: [String]) async throws -> String {
    let child = try ChildProcess(arguments)
    let status = try await child.waitForExit()
    #expect(status == .exited(0), "\(child.standardError)")
    return child.outputLines.last ?? ""
  }

  func mode(_ url: URL) -> UInt32? { FileSystem.stat(url.path).map { $0.mode & 0o7777 } }

  @Test func newFilesGet0666LessTheUmaskOrTheKeysTighterMode() async throws {
    let shared = directory.file("shared.json")
    #expect(try await run(["file-save-umask", shared.path, "002", "1"]) == "saved")
    #expect(mode(shared) == 0o664)
    let privateFile = directory.file("private.json")
    #expect(try await run(["file-save-umask", privateFile.path, "077", "1"]) == "saved")
    #expect(mode(privateFile) == 0o600)
    let tighter = directory.file("tighter.json")
    #expect(try await run(["file-save-umask", tighter.path, "002", "1", "600"]) == "saved")
    #expect(mode(tighter) == 0o600)
    // An existing file keeps its mode whatever the umask.
    #expect(try await run(["file-save-umask", shared.path, "077", "2"]) == "saved")
    #expect(mode(shared) == 0o664)
    #expect(decodeFile(shared, as: Int.self) == 2)
  }

  // CI runs as root, for whom permission bits do not stop writes: the child becomes `nobody`
  // before saving, in a directory it may write (so a rename over the file would succeed).
  @Test func savingOverAFileTheProcessMayNotWriteFailsAndLeavesItUntouched() async throws {
    let open = try directory.subdirectory("open")
    #expect(chmod(open.path, 0o777) == 0)
    let url = open.appendingPathComponent("readonly.json")
    try Data("1".utf8).write(to: url)
    #expect(chmod(url.path, 0o444) == 0)
    let before = try #require(FileSystem.stat(url.path))
    let outcome = try await run(["file-save-unprivileged", url.path, "2"])
    #expect(outcome.hasPrefix("error could not write \(url.path): Permission denied"), "\(outcome)")
    #expect(FileSystem.stat(url.path) == before, "the file was replaced")
    #expect(try Data(contentsOf: url) == Data("1".utf8))
    let names = try FileManager.default.contentsOfDirectory(atPath: open.path)
    #expect(names.filter { !$0.hasSuffix(".tether-lock") } == ["readonly.json"])
  }

  // Issue #9, item 1: the identity recorded for a write was a `stat` of the path after the
  // rename, which could be the other process's newer file; its change was then taken for an
  // echo of our own and never delivered, and the ping-pong stalled for good.
  @Test func twoProcessesTakingTurns600TimesUnderCPULoadNeverStall() async throws {
    let stop = Atomic<Bool>(false)
    for _ in 0..<2 {
      Thread {
        var spin: UInt64 = 0
        while !stop.load(ordering: .relaxed) { spin &+= 1 }
      }.start()
    }
    defer { stop.store(true, ordering: .relaxed) }
    for round in 1...3 {
      let url = directory.file("pingpong-\(round).json")
      try Data("0".utf8).write(to: url)
      let even = try ChildProcess(["file-pingpong", url.path, "0", "600"])
      let odd = try ChildProcess(["file-pingpong", url.path, "1", "600"])
      for child in [even, odd] {
        do {
          let line = try await child.waitForLine(
            matching: { $0.hasPrefix("done") }, description: "done (round \(round))",
            timeout: .seconds(90))
          #expect(line == "done 600", "round \(round)")
        } catch {
          // Stalled: say where each holder stands (its value, and the file it sees).
          for other in [even, odd] {
            try? other.send(line: "status")
            let status = try? await other.waitForLine(containing: "status", timeout: .seconds(5))
            Issue.record(
              "\(other.arguments): \(status ?? "no status"); \(other.outputLines.suffix(3))")
          }
          throw error
        }
      }
      for child in [even, odd] {
        child.closeInput()
        #expect(try await child.waitForExit() == .exited(0))
      }
      #expect(decodeFile(url, as: Int.self) == 600, "round \(round)")
    }
  }
}
