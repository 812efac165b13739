#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How other threads wake an ``EventLoop`` blocked in its ``Poller``: a descriptor the loop
/// watches for reading, which ``wake()`` makes ready.
///
/// With epoll it is an `eventfd` watched edge-triggered: each ``wake()`` is one `write` and
/// one readiness report, and the loop never reads it (its counter cannot reach its limit of
/// 2⁶⁴ − 2 wake-ups). Elsewhere it is a pipe, which the loop empties (``drain()``) before it
/// waits again, since `poll(2)` reports a readable pipe until it is empty.
///
/// The loop asks for a wake-up only when none is on its way (``EventLoop``'s `wakePending`),
/// so a pipe holds at most a byte or two.
final class Waker {
  /// The descriptor the loop watches (read interest, edge-triggered when ``isEdgeTriggered``).
  let descriptor: Int32
  /// Whether the poller must watch ``descriptor`` edge-triggered (the `eventfd`).
  let isEdgeTriggered: Bool
  private let writeEnd: Int32
  private var drainBuffer = [UInt8](repeating: 0, count: 64)

  /// An `eventfd` when `edgeTriggered` polling is available and the C library has one; a
  /// non-blocking pipe otherwise.
  init(edgeTriggered: Bool) throws(EngineFailure) {
    if edgeTriggered, let eventfd = Self.eventfd {
      let descriptor = eventfd(0, Int32(O_NONBLOCK | O_CLOEXEC))
      guard descriptor >= 0 else { throw EngineFailure("eventfd failed: \(errno)") }
      self.descriptor = descriptor
      writeEnd = descriptor
      isEdgeTriggered = true
      return
    }
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw EngineFailure("pipe failed: \(errno)") }
    for end in pipeEnds {
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
    }
    descriptor = pipeEnds[0]
    writeEnd = pipeEnds[1]
    isEdgeTriggered = false
  }

  /// Makes ``descriptor`` ready (any thread).
  func wake() {
    if isEdgeTriggered {
      var one: UInt64 = 1
      _ = write(writeEnd, &one, MemoryLayout<UInt64>.size)
    } else {
      var byte: UInt8 = 1
      _ = write(writeEnd, &byte, 1)
    }
  }

  /// Consumes the wake-ups reported (loop thread only): empties the pipe; nothing to do for
  /// the `eventfd`.
  func drain() {
    guard !isEdgeTriggered else { return }
    // A producer writes one byte per wake-up, so a short read emptied the pipe: no second
    // read just to hear EAGAIN.
    let count = drainBuffer.count
    var taken = count
    while taken == count {
      taken = drainBuffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, count) }
    }
  }

  private typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

  /// `eventfd(2)`, found with ``DynamicLibrary`` (the toolchain's Glibc module does not
  /// export `sys/eventfd.h`).
  private static let eventfd: EventFD? = {
    #if os(Linux)
    DynamicLibrary.process?.function("eventfd", as: EventFD.self)
    #else
    return nil
    #endif
  }()
}
