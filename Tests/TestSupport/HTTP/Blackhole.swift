import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 where a TCP connect is never answered: for connect timeouts.
///
/// It listens with a backlog of zero, never accepts, and fills its accept queue with
/// connections of its own; the kernel then drops every further SYN, so a client's `connect`
/// stays pending until the client gives up. (Linux drops SYNs to a listener whose accept queue
/// is full; `init` checks that this happened and throws otherwise.)
///
/// ```swift
/// let blackhole = try await Blackhole.start()
/// // a client with a 1 s timeout connecting to blackhole.baseURL times out after 1 s
/// ```
public final class Blackhole: Sendable {
  /// The port nobody answers on.
  public let port: UInt16
  private let listener: Socket
  private let fillers: [Int32]

  /// `http://127.0.0.1:<port>`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

  /// Makes a blackhole on a thread of its own (see ``init()``, which blocks for 300 ms or
  /// more): from async code, use this rather than the initializer.
  public static func start() async throws -> Blackhole {
    try await onDedicatedThread { Result { try Blackhole() } }.get()
  }

  /// Listens, fills the accept queue, and checks that a further connect is not answered.
  ///
  /// Blocking: it waits 300 ms for a connect that must not complete. Swift concurrency has one
  /// thread per core (two on CI), so async code calls ``start()`` instead.
  ///
  /// - Throws: `SocketError` when the socket cannot be made, or when this platform answered
  ///   every connect (operation `"blackhole"`).
  public init() throws {
    (listener, port) = try Socket.listenOnLoopback(backlog: 0)
    var fillers: [Int32] = []
    var unanswered = false
    for _ in 0..<16 {
      let (descriptor, connected) = Self.connect(port: port, within: .milliseconds(300))
      if descriptor >= 0 { fillers.append(descriptor) }
      if !connected {
        unanswered = descriptor >= 0
        break
      }
    }
    self.fillers = fillers
    guard unanswered else {
      for descriptor in fillers { _ = close(descriptor) }
      listener.close()
      throw SocketError(operation: "blackhole", code: EINVAL)
    }
  }

  deinit {
    for descriptor in fillers { _ = close(descriptor) }
    listener.close()
  }

  /// A non-blocking connect; whether it completed within `limit`.
  private static func connect(port: UInt16, within limit: Duration) -> (Int32, Bool) {
    #if canImport(Darwin)
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    #endif
    guard descriptor >= 0 else { return (-1, false) }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    var address = sockaddr_in()
    #if canImport(Darwin)
    address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
    #endif
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port).bigEndian
    address.sin_addr = in_addr(s_addr: in_addr_t(0x7f00_0001).bigEndian)
    let result = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
        #if canImport(Darwin)
        Darwin.connect(descriptor, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
        #else
        Glibc.connect(descriptor, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
        #endif
      }
    }
    if result == 0 { return (descriptor, true) }
    guard errno == EINPROGRESS else {
      _ = close(descriptor)
      return (-1, false)
    }
    var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
    let (seconds, attoseconds) = limit.components
    let milliseconds = Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    guard poll(&entry, 1, milliseconds) > 0 else { return (descriptor, false) }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
    return (descriptor, error == 0)
  }
}
