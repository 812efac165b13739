/// The bytes of one connected, non-blocking socket, plain or through TLS: the one interface
/// ``HTTP1Connection`` reads and writes, so nothing above it knows which it has.
///
/// ```swift
/// // On the socket's readiness:
/// let ready = stream.progress(readable: readable, writable: writable)
/// if ready.write { _ = stream.write(bytes) }
/// if ready.read { _ = stream.read(into: buffer) }
/// let interest = stream.interest(reading: true, writing: stillWriting)
/// loop.setInterest(stream.descriptor, token: token, read: interest.read, write: interest.write)
/// ```
///
/// - Each call does what it can without blocking and says what it waits for. A TLS stream's
///   read may wait for the socket to be writable and its write for it to be readable (TLS
///   updating keys); the stream remembers it, and ``interest(reading:writing:)`` and
///   ``progress(readable:writable:)`` translate between what the caller wants and the
///   socket's readiness, so the inversion stays inside the stream.
/// - A write that returned `.wantRead`/`.wantWrite` is called again with the same bytes.
/// - ``close()`` ends the stream and closes the descriptor, once; the stream never closes it
///   otherwise.
///
/// Confined to the connection's loop; not `Sendable`.
protocol ByteStream: AnyObject {
  /// The socket, for registering with the loop.
  var descriptor: Int32 { get }
  /// How many reads one readiness report is worth: a plain read takes everything the kernel
  /// holds (up to the buffer), a TLS read at most one record.
  var readsPerReadiness: Int { get }
  /// Bytes the stream holds for the next read that do not make the socket readable (TLS's
  /// decrypted bytes): a caller that stops reading while this is above zero must read again
  /// without waiting for readiness.
  var bufferedByteCount: Int { get }
  /// Reads what has arrived into `buffer`.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> ByteStreamRead
  /// Writes as much of `bytes` as the socket takes.
  func write(_ bytes: UnsafeRawBufferPointer) -> ByteStreamWrite
  /// Whether the socket holds input (a byte or its end) not read yet, asked without reading.
  func hasUnreadInput() -> Bool
  /// The socket readiness to wait for, when the caller wants to read, to write, or both.
  func interest(reading: Bool, writing: Bool) -> (read: Bool, write: Bool)
  /// Whether a read, and a write, can make progress now that the socket is `readable` and
  /// `writable`.
  func progress(readable: Bool, writable: Bool) -> (read: Bool, write: Bool)
  /// Ends the stream (a TLS stream sends close_notify if the socket takes it at once) and
  /// closes the descriptor. Safe to call more than once.
  func close()
}

extension ByteStream {
  /// Whether an idle stream has nothing to read: no end of the stream, no stray byte.
  /// Readiness may not have been reported yet when a request arrives right after the previous
  /// answer, so this asks the socket itself. Over TLS the waiting bytes may be session
  /// tickets, which TLS takes without a byte for HTTP: they are read (into `scratch`), then
  /// the socket is asked again.
  func isQuietWhileIdle(scratch: UnsafeMutableRawBufferPointer) -> Bool {
    for _ in 0..<8 {
      guard hasUnreadInput() else { return bufferedByteCount == 0 }
      switch read(into: scratch) {
      case .wantRead, .wantWrite: continue
      case .bytes, .closed, .failed: return false
      }
    }
    return false
  }
}

/// What a ``ByteStream`` read came to.
enum ByteStreamRead: Equatable {
  /// This many bytes are at the start of the buffer (at least one).
  case bytes(Int)
  /// Nothing to read yet: wait for the readiness ``ByteStream/interest(reading:writing:)``
  /// names.
  case wantRead
  /// Nothing read yet, and the stream must send before it can read on (TLS): wait for the
  /// readiness ``ByteStream/interest(reading:writing:)`` names.
  case wantWrite
  /// The peer ended the stream (or reset a plain socket).
  case closed
  /// The stream failed and is unusable; `reason` says why, for an error.
  case failed(reason: FailureReason)
}

/// What a ``ByteStream`` write came to.
enum ByteStreamWrite: Equatable {
  /// This many of the bytes were taken (at least one, unless the bytes were empty).
  case wrote(Int)
  /// Nothing taken; call again with the same bytes when readiness allows.
  case wantWrite
  /// Nothing taken, and the stream must read before it can write on (TLS); call again with
  /// the same bytes when readiness allows.
  case wantRead
  /// The peer stopped reading or the stream failed; nothing more can be written.
  case failed(reason: FailureReason)
}
