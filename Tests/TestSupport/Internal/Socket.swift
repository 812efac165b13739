import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking TCP socket on 127.0.0.1: the one place that speaks the platform's socket API.
///
/// It is a plain descriptor wrapper; whoever created it decides who closes it. The server's
/// rule is that only the thread serving a connection closes that connection's descriptor;
/// other threads may only `shutdown()` it, which wakes a blocked `receive` or `send`.
struct Socket: Sendable, Hashable {
  let descriptor: Int32

  /// Opens a listening socket on an ephemeral port of 127.0.0.1 and returns it with the port.
  static func listenOnLoopback(backlog: Int32 = 128) throws -> (socket: Socket, port: UInt16) {
    let socket = try Socket(descriptor: check("socket", makeStreamSocket()))
    do {
      var address = loopbackAddress(port: 0)
      try withUnsafePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
          _ = try check(
            "bind", bind(socket.descriptor, raw, socklen_t(MemoryLayout<sockaddr_in>.size)))
        }
      }
      _ = try check("listen", listen(socket.descriptor, backlog))
      var bound = sockaddr_in()
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      try withUnsafeMutablePointer(to: &bound) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
          _ = try check("getsockname", getsockname(socket.descriptor, raw, &length))
        }
      }
      return (socket, UInt16(bigEndian: bound.sin_port))
    } catch {
      socket.close()
      throw error
    }
  }

  /// Connects to `127.0.0.1:port`.
  static func connectToLoopback(port: UInt16) throws -> Socket {
    let socket = try Socket(descriptor: check("socket", makeStreamSocket()))
    var address = loopbackAddress(port: port)
    do {
      try withUnsafePointer(to: &address) { pointer in
        try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
          _ = try check(
            "connect", connect(socket.descriptor, raw, socklen_t(MemoryLayout<sockaddr_in>.size)))
        }
      }
    } catch {
      socket.close()
      throw error
    }
    return socket
  }

  /// Accepts one connection, or returns `nil` when nothing is pending.
  func accept() throws -> Socket? {
    while true {
      // Accepting and marking close-on-exec is one step with respect to `ChildProcess`
      // spawning, so a child never inherits a connection (and keeps it open).
      let client = spawnGuard.withLock { _ in Self.platformAccept(descriptor) }
      if client >= 0 {
        let socket = Socket(descriptor: client)
        socket.disableSIGPIPE()
        var noDelay: Int32 = 1
        _ = setsockopt(
          client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        return socket
      }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK, ECONNABORTED: return nil
      default: throw SocketError(operation: "accept", code: errno)
      }
    }
  }

  /// Waits until the socket is readable (data, end of stream or an error) or `timeout` passes.
  ///
  /// `nil` waits without a limit. Returns `false` on timeout.
  func waitUntilReadable(timeout: Duration?) throws -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: POLLIN), revents: 0)
    let milliseconds: Int32
    if let timeout {
      let (seconds, attoseconds) = timeout.components
      let total = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
      milliseconds = Int32(clamping: total)
    } else {
      milliseconds = -1
    }
    while true {
      let result = poll(&entry, 1, milliseconds)
      if result >= 0 { return result > 0 }
      if errno != EINTR { throw SocketError(operation: "poll", code: errno) }
    }
  }

  /// Reads up to `maximum` bytes; an empty result means the peer closed its side.
  func receive(maximum: Int = 65_536) throws -> [UInt8] {
    while true {
      // Received straight into an uninitialized array: zeroing 64 KiB and copying the bytes
      // out again cost more than the rest of a keep-alive request.
      var failure: Int32 = 0
      let bytes = [UInt8](unsafeUninitializedCapacity: maximum) { buffer, count in
        let received = recv(descriptor, buffer.baseAddress, maximum, 0)
        count = max(0, received)
        if received < 0 { failure = errno }
      }
      if failure == 0 { return bytes }
      if failure != EINTR { throw SocketError(operation: "recv", code: failure) }
    }
  }

  /// Writes every byte of `bytes`, or throws when the peer went away.
  func send(_ bytes: some DataProtocol) throws {
    let data = Data(bytes)
    try data.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        let count = Self.platformSend(descriptor, raw.baseAddress! + offset, raw.count - offset)
        if count > 0 {
          offset += count
        } else if count < 0 && errno == EINTR {
          continue
        } else {
          throw SocketError(operation: "send", code: count < 0 ? errno : EPIPE)
        }
      }
    }
  }

  /// Ends both directions without releasing the descriptor; wakes threads blocked on it.
  func shutdown() {
    _ = Self.platformShutdown(descriptor)
  }

  /// Releases the descriptor with an orderly close (FIN).
  func close() {
    _ = Self.platformClose(descriptor)
  }

  /// Makes the coming `close()` a connection reset (RST) for the peer, not an orderly close.
  func resetOnClose() {
    var option = linger(l_onoff: 1, l_linger: 0)
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
  }

  private func disableSIGPIPE() {
    #if canImport(Darwin)
    var on: Int32 = 1
    _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    #endif
  }

  private static func check(_ operation: String, _ result: Int32) throws -> Int32 {
    if result < 0 { throw SocketError(operation: operation, code: errno) }
    return result
  }

  private static func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    #if canImport(Darwin)
    address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
    #endif
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port).bigEndian
    address.sin_addr = in_addr(s_addr: in_addr_t(0x7f00_0001).bigEndian)
    return address
  }

  private static func makeStreamSocket() -> Int32 {
    #if canImport(Darwin)
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    if descriptor >= 0 { Socket(descriptor: descriptor).disableSIGPIPE() }
    return descriptor
    #else
    return socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    #endif
  }

  private static func platformAccept(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.accept(descriptor, nil, nil)
    #else
    let client = Glibc.accept(descriptor, nil, nil)
    // Not inherited by the child processes tests launch.
    if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
    return client
    #endif
  }

  private static func platformSend(
    _ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int
  )
    -> Int
  {
    #if canImport(Darwin)
    return Darwin.send(descriptor, bytes, count, 0)
    #else
    return Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #endif
  }

  private static func platformShutdown(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.shutdown(descriptor, SHUT_RDWR)
    #else
    return Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    #endif
  }

  private static func platformClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Darwin)
    return Darwin.close(descriptor)
    #else
    return Glibc.close(descriptor)
    #endif
  }
}

/// A failed socket call, with the `errno` it reported.
public struct SocketError: Error, Equatable, CustomStringConvertible {
  /// The system call that failed, such as `"connect"` or `"recv"`.
  public let operation: String
  /// The `errno` value.
  public let code: Int32

  /// Whether the peer reset the connection (`ECONNRESET`), as the `.connectionReset` fault does.
  public var isConnectionReset: Bool { code == ECONNRESET }

  /// Whether the call failed for lack of descriptors or memory, which may pass.
  var isResourceShortage: Bool { [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) }

  /// A readable description, such as `recv failed: Connection reset by peer (104)`.
  public var description: String {
    "\(operation) failed: \(String(cString: strerror(code))) (\(code))"
  }
}

extension Socket {
  /// Whether the peer has closed its side (or the connection failed), without consuming data.
  func peerHasClosed() -> Bool {
    var byte: UInt8 = 0
    let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    if count == 0 { return true }
    return count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
  }
}

/// Held while a child process is spawned, and while a new descriptor exists without its
/// close-on-exec flag, so no child inherits a socket between the two steps.
let spawnGuard = LockedState(())
