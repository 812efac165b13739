import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``ByteStream`` straight over a TCP socket: `recv` and `send` (without `SIGPIPE`), and
/// readiness meaning what it says. It owns the descriptor from its creation and closes it in
/// ``close()`` (or when it is freed).
final class PlainByteStream: ByteStream {
  let descriptor: Int32
  private var isClosed = false

  /// A stream over `descriptor`, connected and non-blocking; the stream now owns it.
  init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit { close() }

  var readsPerReadiness: Int { 1 }

  var bufferedByteCount: Int { 0 }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> ByteStreamRead {
    let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
    if count > 0 { return .bytes(count) }
    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .wantRead }
    // The end of the stream (0) or its failure (a reset): the answer's framing decides
    // whether what arrived is whole.
    return .closed
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> ByteStreamWrite {
    guard !bytes.isEmpty else { return .wrote(0) }
    while true {
      let count = send(descriptor, bytes.baseAddress, bytes.count, sendNoSignal)
      if count > 0 { return .wrote(count) }
      if count < 0, errno == EINTR { continue }
      if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .wantWrite }
      return .failed(reason: FailureReason(count < 0 ? String(cString: strerror(errno)) : "closed"))
    }
  }

  func hasUnreadInput() -> Bool {
    var byte: UInt8 = 0
    let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    return !(count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
  }

  func interest(reading: Bool, writing: Bool) -> (read: Bool, write: Bool) {
    (reading, writing)
  }

  func progress(readable: Bool, writable: Bool) -> (read: Bool, write: Bool) {
    (readable, writable)
  }

  func close() {
    guard !isClosed else { return }
    isClosed = true
    closeDescriptor(descriptor)
  }
}

/// `close(2)`, spelled so that it does not collide with the `close()` methods of the types
/// that call it.
@inline(__always)
func closeDescriptor(_ descriptor: Int32) {
  _ = Foundation.close(descriptor)
}
