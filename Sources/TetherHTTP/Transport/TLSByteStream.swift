/// A ``ByteStream`` through TLS: a ``TLSSession`` over a ``PlainByteStream``'s socket. It
/// keeps TLS's inverted readiness to itself: a read that must send first waits for the socket
/// to be writable, a write that must receive first waits for it to be readable, and
/// ``interest(reading:writing:)`` and ``progress(readable:writable:)`` say so.
///
/// ```swift
/// let stream = try TLSByteStream(over: plain, context: context, host: "example.com")
/// switch stream.handshake() {
/// case .done: // read and write HTTP
/// case .waiting: // set the interest for reading and wait
/// case .failed(let failure): fail(failure.httpError(url: origin))
/// }
/// ```
///
/// ``close()`` sends close_notify if the socket takes it at once, frees the session, then
/// closes the socket once.
final class TLSByteStream: ByteStream {
  /// What a handshake step came to.
  enum HandshakeStep: Equatable {
    /// The connection is encrypted and the server's certificate verified.
    case done
    /// Call again when ``progress(readable:writable:)`` says a read can progress.
    case waiting
    /// The handshake failed; the stream is unusable.
    case failed(TLSFailure)
  }

  /// Which socket readiness a direction waits for.
  private enum Readiness { case readable, writable }

  private let transport: PlainByteStream
  private let session: TLSSession
  private var readWaitsFor = Readiness.readable
  private var writeWaitsFor = Readiness.writable
  private var isClosed = false

  /// Starts TLS as a client over `transport` to `host`; nothing is sent until the first
  /// ``handshake()``. The stream owns `transport` from here.
  ///
  /// - Throws: ``TLSFailure/invalidConfiguration(_:)`` when OpenSSL refuses the host name or
  ///   runs out of memory.
  init(over transport: PlainByteStream, context: TLSContext, host: String) throws(TLSFailure) {
    self.transport = transport
    session = try TLSSession(context: context, descriptor: transport.descriptor, host: host)
  }

  deinit { close() }

  var descriptor: Int32 { transport.descriptor }

  /// TLS hands back at most one record per read, and leaves the rest in the kernel: reading a
  /// few in a row saves waiting for readiness again.
  var readsPerReadiness: Int { 16 }

  var bufferedByteCount: Int { session.bufferedByteCount }

  /// Takes the handshake as far as the socket allows. While it waits, the read direction
  /// says what for: ask ``interest(reading:writing:)`` with `reading: true`.
  func handshake() -> HandshakeStep {
    switch session.handshake() {
    case .done:
      readWaitsFor = .readable
      return .done
    case .wantRead:
      readWaitsFor = .readable
      return .waiting
    case .wantWrite:
      readWaitsFor = .writable
      return .waiting
    case .failed(let failure):
      return .failed(failure)
    }
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> ByteStreamRead {
    switch session.read(into: buffer) {
    case .bytes(let count):
      return count > 0 ? .bytes(count) : .wantRead
    case .wantRead:
      readWaitsFor = .readable
      return .wantRead
    case .wantWrite:
      readWaitsFor = .writable
      return .wantWrite
    case .closed:
      return .closed
    case .failed(let failure):
      return .failed(reason: failure.failureReason)
    }
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> ByteStreamWrite {
    switch session.write(bytes) {
    case .wrote(let count):
      return .wrote(count)
    case .wantWrite:
      writeWaitsFor = .writable
      return .wantWrite
    case .wantRead:
      writeWaitsFor = .readable
      return .wantRead
    case .failed(let failure):
      return .failed(reason: failure.failureReason)
    }
  }

  func hasUnreadInput() -> Bool { transport.hasUnreadInput() }

  func interest(reading: Bool, writing: Bool) -> (read: Bool, write: Bool) {
    (
      read: (reading && readWaitsFor == .readable) || (writing && writeWaitsFor == .readable),
      write: (writing && writeWaitsFor == .writable) || (reading && readWaitsFor == .writable)
    )
  }

  func progress(readable: Bool, writable: Bool) -> (read: Bool, write: Bool) {
    (
      read: readWaitsFor == .readable ? readable : writable,
      write: writeWaitsFor == .writable ? writable : readable
    )
  }

  func close() {
    guard !isClosed else { return }
    isClosed = true
    // close_notify and the session's memory first; the descriptor is closed once, after.
    session.close()
    transport.close()
  }
}
