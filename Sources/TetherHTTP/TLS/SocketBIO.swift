#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of one ``TLSSession`` to and from its socket: an OpenSSL `BIO` of our own whose
/// write is `send(2)` with `MSG_NOSIGNAL` and whose read is `recv(2)`.
///
/// OpenSSL's own socket BIO writes with `write(2)`, which raises `SIGPIPE` (and kills the
/// process) on a socket whose peer has gone; guarding each call meant four to six more system
/// calls per `SSL_read` and `SSL_write` to mask and unmask the signal. This BIO never raises
/// it and costs one system call per read or write, as plain http does.
///
/// It reads exactly what OpenSSL asks for (a record's header, then its body) and nothing
/// ahead, so bytes OpenSSL has not taken stay in the kernel and keep the socket readable, as
/// the engine's level-triggered loop expects.
///
/// The C callbacks cannot capture anything, so the session that calls OpenSSL names its BIO
/// for the calling thread around each call (``run(_:)``); a callback outside such a call
/// (none is expected) fails its read or write.
final class SocketBIO {
  /// The connected, non-blocking socket. Never closed here.
  let descriptor: Int32
  private let library: OpenSSLLibrary
  /// The `BIO*`, which the `SSL` owns once ``attach(to:)`` has run.
  private let bio: OpenSSLObject<BIOKind>
  /// `errno` of the last read or write that failed (not one that would block), or 0.
  private(set) var lastError: Int32 = 0
  /// Whether a read found the end of the stream (the peer closed its side).
  private(set) var reachedEnd = false

  /// A BIO over `descriptor`, made with `library`'s ``OpenSSLLibrary/socketMethod``.
  init(descriptor: Int32, library: OpenSSLLibrary) throws(TLSFailure) {
    self.descriptor = descriptor
    self.library = library
    bio = try .adopt(library.bioNew(library.socketMethod), library, failing: "BIO_new")
    // Without `init` set, BIO_read and BIO_write refuse the BIO.
    library.bioSetInit(bio.pointer, 1)
  }

  /// Makes `ssl` read and write through this BIO; the `SSL` takes the BIO's reference.
  func attach(to ssl: SSLConnectionObject) {
    // With the same BIO for both directions, SSL_set_bio takes one reference.
    library.setBIO(ssl.pointer, bio.transferOwnership(), bio.pointer)
  }

  /// Runs `body` (one `SSL_*` call on the session this BIO carries) with this BIO named as
  /// the calling thread's, and the last call's error forgotten.
  func run<Result>(_ body: () -> Result) -> Result {
    lastError = 0
    pthread_setspecific(currentSocketBIO, Unmanaged.passUnretained(self).toOpaque())
    defer { pthread_setspecific(currentSocketBIO, nil) }
    return body()
  }

  /// The BIO the running ``run(_:)`` named, if it is `bio`.
  fileprivate static func current(_ bio: OpaquePointer?) -> SocketBIO? {
    guard let raw = pthread_getspecific(currentSocketBIO) else { return nil }
    let current = Unmanaged<SocketBIO>.fromOpaque(raw).takeUnretainedValue()
    return current.bio.pointer == bio ? current : nil
  }

  fileprivate func receive(_ buffer: UnsafeMutablePointer<CChar>?, _ length: Int32) -> Int32 {
    library.bioClearFlags(bio.pointer, OpenSSLLibrary.bioFlagsRetryAll)
    while true {
      let count = recv(descriptor, buffer, Int(length), 0)
      if count > 0 { return Int32(count) }
      if count == 0 {
        reachedEnd = true
        return 0
      }
      if errno == EINTR { continue }
      if errno == EAGAIN || errno == EWOULDBLOCK {
        library.bioSetFlags(
          bio.pointer, OpenSSLLibrary.bioFlagRead | OpenSSLLibrary.bioFlagShouldRetry)
      } else {
        lastError = errno
      }
      return -1
    }
  }

  fileprivate func transmit(_ bytes: UnsafePointer<CChar>?, _ length: Int32) -> Int32 {
    library.bioClearFlags(bio.pointer, OpenSSLLibrary.bioFlagsRetryAll)
    while true {
      // MSG_NOSIGNAL: a peer that has gone fails the send with EPIPE, never with SIGPIPE.
      let count = send(descriptor, bytes, Int(length), noSignal)
      if count >= 0 { return Int32(count) }
      if errno == EINTR { continue }
      if errno == EAGAIN || errno == EWOULDBLOCK {
        library.bioSetFlags(
          bio.pointer, OpenSSLLibrary.bioFlagWrite | OpenSSLLibrary.bioFlagShouldRetry)
      } else {
        lastError = errno
      }
      return -1
    }
  }

  /// Makes the `BIO_METHOD` that sends and receives this way (once per loaded library).
  static func makeMethod(_ symbols: OpenSSLSymbols) throws(TLSFailure) -> OpaquePointer {
    let newIndex: OpenSSLLibrary.NewIndexFunction = try symbols.function("BIO_get_new_index")
    let newMethod: OpenSSLLibrary.NewBIOMethodFunction = try symbols.function("BIO_meth_new")
    let setRead: OpenSSLLibrary.SetBIOReadFunction = try symbols.function("BIO_meth_set_read")
    let setWrite: OpenSSLLibrary.SetBIOWriteFunction = try symbols.function("BIO_meth_set_write")
    let setControl: OpenSSLLibrary.SetBIOControlFunction = try symbols.function(
      "BIO_meth_set_ctrl")
    let index = newIndex()
    guard index > 0,
      let method = newMethod(index | OpenSSLLibrary.bioTypeSourceSink, "tether socket")
    else {
      throw TLSFailure.libraryUnavailable("a socket BIO cannot be made in \(symbols.name)")
    }
    guard setRead(method, socketBIORead) == 1, setWrite(method, socketBIOWrite) == 1,
      setControl(method, socketBIOControl) == 1
    else {
      throw TLSFailure.libraryUnavailable("a socket BIO cannot be set up in \(symbols.name)")
    }
    return method
  }
}

#if canImport(Glibc) || canImport(Musl)
private let noSignal = Int32(MSG_NOSIGNAL)
#else
// Apple platforms never load OpenSSL (URLSession carries https there).
private let noSignal: Int32 = 0
#endif

/// The thread's ``SocketBIO`` within ``SocketBIO/run(_:)``.
private let currentSocketBIO: pthread_key_t = {
  var key = pthread_key_t()
  precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left")
  return key
}()

private let socketBIORead: OpenSSLLibrary.BIOReadCallback = { bio, buffer, length in
  SocketBIO.current(bio)?.receive(buffer, length) ?? -1
}

private let socketBIOWrite: OpenSSLLibrary.BIOWriteCallback = { bio, bytes, length in
  SocketBIO.current(bio)?.transmit(bytes, length) ?? -1
}

private let socketBIOControl: OpenSSLLibrary.ControlFunction = { bio, command, _, _ in
  switch command {
  case OpenSSLLibrary.bioControlFlush: 1  // nothing is buffered
  case OpenSSLLibrary.bioControlEndOfFile: SocketBIO.current(bio)?.reachedEnd == true ? 1 : 0
  default: 0
  }
}
