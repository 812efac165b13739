import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A second real process for cross-process tests: the `tether-test-child` executable, started
/// with a command and arguments, talked to through its standard input and output.
///
/// ```swift
/// let child = try ChildProcess("echo-lines")
/// try await child.waitForLine("ready")
/// try child.send(line: "hello")
/// #expect(try await child.nextLine() == "hello")
/// child.kill()                                      // SIGKILL, for crash tests
/// #expect(try await child.waitForExit() == .signaled(SIGKILL))
/// ```
///
/// - Output is read on background threads as it arrives; `nextLine` and `waitForLine` take
///   lines in order and fail with `TimeoutError` (showing the recent output and stderr) when
///   their deadline passes, or `ChildProcessError.outputEnded` when the child closes stdout.
/// - Standard error is captured for failure messages (`standardError`).
/// - Releasing the value kills a child that is still running, so no test leaves one behind.
///
/// Thread-safe; typically one task talks to a child.
public final class ChildProcess: Sendable {
  /// The arguments the child was started with (its command first).
  public let arguments: [String]
  /// The child's process identifier.
  public let processIdentifier: Int32
  private let process: Process
  private let input: FileHandle
  private let pipes: ChildPipes

  /// Starts `tether-test-child` with `arguments` (a command name, then its arguments).
  ///
  /// - Parameters:
  ///   - environment: Added to (and overriding) the test process's environment.
  ///   - executableURL: Another executable to run instead of `tether-test-child`.
  /// - Throws: `ChildProcessError.executableNotFound`, or the error from starting it.
  public init(
    _ arguments: [String], environment: [String: String] = [:], executableURL: URL? = nil
  ) throws {
    // A write to a pipe whose reader has exited must fail with EPIPE, not kill the test process.
    signal(SIGPIPE, SIG_IGN)
    let process = Process()
    process.executableURL = try executableURL ?? Self.locateExecutable()
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let standardInput = Pipe()
    let standardOutput = Pipe()
    let standardError = Pipe()
    process.standardInput = standardInput
    process.standardOutput = standardOutput
    process.standardError = standardError
    let pipes = ChildPipes(
      name: ([process.executableURL!.lastPathComponent] + arguments).joined(
        separator: " "))
    process.terminationHandler = { process in
      let status: ExitStatus =
        process.terminationReason == .uncaughtSignal
        ? .signaled(process.terminationStatus) : .exited(process.terminationStatus)
      pipes.processExited(status)
    }
    try spawnGuard.withLock { _ in try process.run() }
    self.process = process
    self.arguments = arguments
    self.processIdentifier = process.processIdentifier
    self.input = standardInput.fileHandleForWriting
    self.pipes = pipes
    pipes.startReading(
      output: standardOutput.fileHandleForReading, error: standardError.fileHandleForReading)
  }

  /// Starts `tether-test-child` with a command and its arguments:
  /// `try ChildProcess("exit", "3")`.
  public convenience init(_ arguments: String...) throws {
    try self.init(arguments)
  }

  deinit {
    if process.isRunning { sendSignal(processIdentifier, SIGKILL) }
    try? input.close()
  }

  // MARK: - Standard input

  /// Writes `line` and a newline to the child's standard input.
  /// - Throws: `ChildProcessError.inputClosed` when the child no longer reads its input.
  public func send(line: String) throws {
    try write(Data((line + "\n").utf8))
  }

  /// Writes `data` to the child's standard input.
  /// - Throws: `ChildProcessError.inputClosed` when the child no longer reads its input.
  public func write(_ data: Data) throws {
    do {
      try input.write(contentsOf: data)
    } catch {
      throw ChildProcessError.inputClosed(underlying: "\(error)")
    }
  }

  /// Closes the child's standard input, so it reads end-of-file.
  public func closeInput() {
    try? input.close()
  }

  // MARK: - Standard output and error

  /// The next line the child prints on standard output (without the newline).
  ///
  /// - Throws: `TimeoutError` when no line arrives in time; `ChildProcessError.outputEnded`
  ///   when the child closed its output; `CancellationError` when the task is cancelled.
  public func nextLine(timeout: Duration = Deadline.defaultTimeout) async throws -> String {
    try await pipes.nextLine(deadline: .after(timeout), waitingFor: "a line")
  }

  /// Takes lines until one satisfies `predicate`, and returns it; the lines before it are
  /// skipped (they stay in `outputLines`).
  ///
  /// - Parameter description: Names what is awaited in the timeout message.
  /// - Throws: As `nextLine(timeout:)`.
  @discardableResult
  public func waitForLine(
    matching predicate: (String) -> Bool,
    description: String = "a line matching the predicate",
    timeout: Duration = Deadline.defaultTimeout
  ) async throws -> String {
    let deadline = Deadline.after(timeout)
    while true {
      let line = try await pipes.nextLine(deadline: deadline, waitingFor: description)
      if predicate(line) { return line }
    }
  }

  /// Takes lines until one equals `line`.
  /// - Throws: As `nextLine(timeout:)`.
  public func waitForLine(_ line: String, timeout: Duration = Deadline.defaultTimeout) async throws
  {
    try await waitForLine(
      matching: { $0 == line }, description: "the line \(line.debugDescription)",
      timeout: timeout)
  }

  /// Takes lines until one contains `text`, and returns it.
  /// - Throws: As `nextLine(timeout:)`.
  @discardableResult
  public func waitForLine(
    containing text: String, timeout: Duration = Deadline.defaultTimeout
  ) async throws
    -> String
  {
    try await waitForLine(
      matching: { $0.contains(text) }, description: "a line containing \(text.debugDescription)",
      timeout: timeout)
  }

  /// Every line the child has printed on standard output so far, taken or not.
  public var outputLines: [String] { pipes.outputLines }

  /// Everything the child has written to standard error so far.
  public var standardError: String { pipes.standardError }

  // MARK: - Ending

  /// Whether the child is still running.
  public var isRunning: Bool { pipes.exitStatus == nil }

  /// Asks the child to stop (SIGTERM).
  public func terminate() {
    kill(signal: SIGTERM)
  }

  /// Sends `signal` to the child; SIGKILL (the default) ends it at once, as a crash would.
  ///
  /// Does nothing once the child has exited.
  public func kill(signal: Int32 = SIGKILL) {
    guard isRunning else { return }
    sendSignal(processIdentifier, signal)
  }

  /// Waits until the child exits and returns how it ended (after its output has been read).
  ///
  /// - Throws: `TimeoutError` (with the child's recent output and stderr) when it is still
  ///   running at the deadline; the child is left running.
  @discardableResult
  public func waitForExit(timeout: Duration = Deadline.defaultTimeout) async throws -> ExitStatus {
    try await pipes.waitForExit(deadline: .after(timeout))
  }

  // MARK: - Locating the executable

  /// The name of the child executable target.
  public static let executableName = "tether-test-child"

  /// Finds `tether-test-child` next to the running test binary.
  ///
  /// `swift build --build-tests` puts it in the same directory as the test executable
  /// (`.build/<config>/TetherPackageTests.xctest` on Linux) or the `.xctest` bundle (macOS).
  /// The `TETHER_TEST_CHILD` environment variable overrides the search.
  /// - Throws: `ChildProcessError.executableNotFound` with the paths tried.
  public static func locateExecutable() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["TETHER_TEST_CHILD"], !path.isEmpty {
      return URL(fileURLWithPath: path)
    }
    var directories: [URL] = []
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
      directories.append(bundle.bundleURL.deletingLastPathComponent())
    }
    if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
      directories.append(executable.deletingLastPathComponent())
      // Inside a bundle: X.xctest/Contents/MacOS/X → the directory holding X.xctest.
      directories.append(
        executable.deletingLastPathComponent().deletingLastPathComponent()
          .deletingLastPathComponent().deletingLastPathComponent())
    }
    let arguments0 = URL(fileURLWithPath: CommandLine.arguments.first ?? "")
    directories.append(arguments0.resolvingSymlinksInPath().deletingLastPathComponent())
    let candidates = directories.map { $0.appendingPathComponent(executableName).path }
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
      return URL(fileURLWithPath: found)
    }
    throw ChildProcessError.executableNotFound(name: executableName, searched: candidates)
  }
}

/// `kill(2)`, named apart from `ChildProcess.kill(signal:)`.
private func sendSignal(_ process: Int32, _ signal: Int32) {
  #if canImport(Glibc)
  _ = Glibc.kill(process, signal)
  #elseif canImport(Darwin)
  _ = Darwin.kill(process, signal)
  #endif
}
