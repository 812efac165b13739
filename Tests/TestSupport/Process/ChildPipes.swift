import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child's output as it arrives, its exit status, and the tasks waiting for either.
///
/// Reader threads push lines and stderr bytes in; `ChildProcess` methods take them out. The
/// exit status is published once the process has ended and both pipes reached end-of-file
/// (or a short grace period passed), so a test that awaits the exit also sees all output.
final class ChildPipes: Sendable {
  private struct State {
    var pending: [String] = []
    var allLines: [String] = []
    var outputEnded = false
    var errorBytes: [UInt8] = []
    var errorEnded = false
    var terminationStatus: ExitStatus?
    var exitStatus: ExitStatus?
    var lineWaiters = Waiters<String>()
    var exitWaiters = Waiters<ExitStatus>()

    /// Publishes the exit status when everything it waits for has happened.
    mutating func publishExitIfReady(
      force: Bool = false
    ) -> [CheckedContinuation<
      ExitStatus, any Error
    >] {
      guard exitStatus == nil, let status = terminationStatus,
        force || (outputEnded && errorEnded)
      else { return [] }
      exitStatus = status
      return exitWaiters.removeAll()
    }
  }

  /// `tether-test-child COMMAND …`, for messages.
  let name: String
  // Guards the output, the exit status and the waiters for both.
  private let state = LockedState(State())
  /// Signalled when standard error reached its end: the end of standard output waits for it
  /// (briefly), so an "output ended" error carries everything the child wrote to stderr.
  private let errorDidEnd = DispatchSemaphore(value: 0)

  init(name: String) {
    self.name = name
  }

  // MARK: - Producers

  func startReading(output: FileHandle, error: FileHandle) {
    Thread.detachNewThread { [self] in
      var partial: [UInt8] = []
      Self.readToEnd(output) { bytes in
        partial.append(contentsOf: bytes)
        while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
          var line = partial[..<newline]
          if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
          received(line: String(decoding: line, as: UTF8.self))
          partial.removeSubrange(...newline)
        }
      }
      if !partial.isEmpty { received(line: String(decoding: partial, as: UTF8.self)) }
      _ = errorDidEnd.wait(timeout: .now() + 1)
      outputDidEnd()
    }
    Thread.detachNewThread { [self] in
      Self.readToEnd(error) { bytes in
        state.withLock { $0.errorBytes.append(contentsOf: bytes) }
      }
      let waiters = state.withLock { state in
        state.errorEnded = true
        return state.publishExitIfReady()
      }
      errorDidEnd.signal()
      resumeExitWaiters(waiters)
    }
  }

  func processExited(_ status: ExitStatus) {
    let waiters = state.withLock { state in
      state.terminationStatus = status
      return state.publishExitIfReady()
    }
    resumeExitWaiters(waiters)
    // A grandchild may hold the pipes open; do not wait for their end forever.
    DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [self] in
      resumeExitWaiters(state.withLock { $0.publishExitIfReady(force: true) })
    }
  }

  private func received(line: String) {
    let waiter = state.withLock { state -> CheckedContinuation<String, any Error>? in
      state.allLines.append(line)
      if let waiter = state.lineWaiters.removeFirst() { return waiter }
      state.pending.append(line)
      return nil
    }
    waiter?.resume(returning: line)
  }

  private func outputDidEnd() {
    let (lineWaiters, exitWaiters) = state.withLock { state in
      state.outputEnded = true
      return (state.lineWaiters.removeAll(), state.publishExitIfReady())
    }
    for waiter in lineWaiters {
      waiter.resume(
        throwing: ChildProcessError.outputEnded(waitingFor: "a line", standardError: standardError))
    }
    resumeExitWaiters(exitWaiters)
  }

  private func resumeExitWaiters(_ waiters: [CheckedContinuation<ExitStatus, any Error>]) {
    guard !waiters.isEmpty, let status = exitStatus else { return }
    for waiter in waiters { waiter.resume(returning: status) }
  }

  /// Reads `handle` until end-of-file, passing each block of bytes to `consume`, then closes it.
  private static func readToEnd(_ handle: FileHandle, _ consume: ([UInt8]) -> Void) {
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while true {
      let count = buffer.withUnsafeMutableBytes {
        read(handle.fileDescriptor, $0.baseAddress, $0.count)
      }
      if count > 0 {
        consume(Array(buffer[..<count]))
      } else if count < 0 && errno == EINTR {
        continue
      } else {
        break
      }
    }
    try? handle.close()
  }

  // MARK: - Consumers

  var outputLines: [String] { state.withLock { $0.allLines } }

  var standardError: String { state.withLock { String(decoding: $0.errorBytes, as: UTF8.self) } }

  var exitStatus: ExitStatus? { state.withLock { $0.exitStatus } }

  func nextLine(deadline: Deadline, waitingFor: String) async throws -> String {
    enum Outcome {
      case line(String)
      case ended
      case cancelled
      case waiting
    }
    let id = state.withLock { $0.lineWaiters.makeID() }
    return try await suspendWithDeadline(
      id: id, timeout: deadline.remaining,
      register: { continuation in
        let outcome = state.withLock { state -> Outcome in
          if !state.pending.isEmpty { return .line(state.pending.removeFirst()) }
          if state.outputEnded { return .ended }
          return state.lineWaiters.add(continuation, id: id) == nil ? .waiting : .cancelled
        }
        switch outcome {
        case .line(let line): continuation.resume(returning: line)
        case .ended:
          continuation.resume(
            throwing: ChildProcessError.outputEnded(
              waitingFor: waitingFor, standardError: standardError))
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .waiting: break
        }
      },
      remove: { [self] cancelling in
        state.withLock {
          cancelling ? $0.lineWaiters.cancel(id: id) : $0.lineWaiters.remove(id: id)
        }
      },
      timeoutError: { [self] in
        TimeoutError(
          waitingFor: "\(waitingFor) from `\(name)`", after: deadline.duration, context: context())
      })
  }

  func waitForExit(deadline: Deadline) async throws -> ExitStatus {
    let id = state.withLock { $0.exitWaiters.makeID() }
    return try await suspendWithDeadline(
      id: id, timeout: deadline.remaining,
      register: { continuation in
        let (status, cancelled) = state.withLock { state -> (ExitStatus?, Bool) in
          if let status = state.exitStatus { return (status, false) }
          return (nil, state.exitWaiters.add(continuation, id: id) != nil)
        }
        if let status {
          continuation.resume(returning: status)
        } else if cancelled {
          continuation.resume(throwing: CancellationError())
        }
      },
      remove: { [self] cancelling in
        state.withLock {
          cancelling ? $0.exitWaiters.cancel(id: id) : $0.exitWaiters.remove(id: id)
        }
      },
      timeoutError: { [self] in
        TimeoutError(
          waitingFor: "`\(name)` to exit", after: deadline.duration, context: context())
      })
  }

  /// The recent output, stderr and state, for failure messages.
  private func context() -> String {
    let (lines, errorText, status) = state.withLock {
      ($0.allLines.suffix(10), String(decoding: $0.errorBytes, as: UTF8.self), $0.exitStatus)
    }
    var text = "child: \(name) (\(status.map(\.description) ?? "still running"))"
    text += "\nlast stdout lines:" + (lines.isEmpty ? " (none)" : "")
    for line in lines { text += "\n  \(line)" }
    text += "\nstderr:" + (errorText.isEmpty ? " (empty)" : "\n\(errorText)")
    return text
  }
}
