import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A raw TCP listener on 127.0.0.1 whose every connection follows a script the test writes:
/// for servers no well-behaved HTTP server would be (accept and never answer, answer then send
/// stray bytes, read nothing, flood a stream as fast as the socket takes it).
///
/// ```swift
/// let server = try HostileServer { connection in
///   guard try connection.readRequest() != nil else { return }
///   try connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokSTRAY")
///   connection.holdUntilClosed()
/// }
/// // a client GETs server.url(for: "/a") …
/// #expect(server.connectionCount == 1)
/// ```
///
/// - Each accepted connection runs the script on a thread of its own; the connection is closed
///   when the script returns (or throws). `connection.number` counts from 1 in accept order.
/// - The server counts connections (accepted, open now, the most open at once), records every
///   request a script reads, and counts the body bytes `flood` managed to write: the kernel's
///   socket buffers fill when the client stops reading, so a stalled count is TCP backpressure
///   observed from the outside.
/// - `stop()`, or releasing the server, closes the listener and every connection, waking any
///   script blocked in a read, a write or a hold.
public final class HostileServer: Sendable {
  private let core: HostileServerCore

  /// Starts listening on an ephemeral port of 127.0.0.1; `script` serves each connection.
  public init(_ script: @escaping @Sendable (HostileConnection) throws -> Void) throws {
    core = try HostileServerCore(script: script)
    core.startAccepting()
  }

  deinit { core.stop() }

  /// Closes the listener and every connection; scripts end. Calling it again does nothing.
  public func stop() { core.stop() }

  /// The port the server listens on.
  public var port: UInt16 { core.port }

  /// `http://127.0.0.1:<port>`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(core.port)")! }

  /// The URL of `path` on this server.
  public func url(for path: String) -> URL {
    URL(string: "http://127.0.0.1:\(core.port)\(path.hasPrefix("/") ? path : "/" + path)")!
  }

  /// How many connections the server has accepted.
  public var connectionCount: Int { core.state.withLock { $0.accepted } }

  /// How many connections are open now (accepted, script not finished or peer not gone).
  public var openConnectionCount: Int { core.state.withLock { $0.open.count } }

  /// The most connections that were open at the same time.
  public var peakOpenConnectionCount: Int { core.state.withLock { $0.peakOpen } }

  /// Every request a script read, in arrival order.
  public var requests: [HostileRequest] { core.state.withLock { $0.requests } }

  /// How many requests scripts have read.
  public var requestCount: Int { core.state.withLock { $0.requests.count } }

  /// The body bytes every `flood` has written so far (accepted by the kernel).
  public var floodedByteCount: Int { core.flooded.load(ordering: .relaxed) }
}

/// A request head (and body, when the script read it) as a `HostileServer` received it.
public struct HostileRequest: Sendable, CustomStringConvertible {
  /// The method, such as `GET`.
  public let method: String
  /// The request target exactly as sent, such as `/users/%2E%2E/repos?x=1`.
  public let target: String
  /// The header fields in the order they arrived.
  public let headerFields: [(name: String, value: String)]
  /// How many body bytes the script read (0 when it read the head only).
  public let bodyByteCount: Int
  /// The connection that carried it (1 for the first accepted).
  public let connectionNumber: Int

  /// The value of header `name` (case-insensitive), repeated fields joined with `, `.
  public func header(_ name: String) -> String? {
    HeaderName.value(of: name, in: headerFields)
  }

  /// A one-line summary, such as `GET /a (connection 2)`.
  public var description: String { "\(method) \(target) (connection \(connectionNumber))" }
}

/// One accepted connection of a `HostileServer`, as its script drives it. Used by one thread.
public final class HostileConnection {
  /// The connection's number: 1 for the first accepted.
  public let number: Int
  private let core: HostileServerCore
  private let socket: Socket
  private let reader: SocketReader

  init(core: HostileServerCore, socket: Socket, number: Int) {
    self.core = core
    self.socket = socket
    self.number = number
    self.reader = SocketReader(socket: socket)
  }

  /// Whether the server was stopped.
  public var isStopped: Bool { core.isStopped }

  /// Reads the next request head and then its body (by `Content-Length` or chunked), records
  /// it and returns it; `nil` when the client closed the connection first.
  @discardableResult
  public func readRequest() throws -> HostileRequest? {
    try read(body: true)
  }

  /// Reads the next request head only and records it, leaving any body unread.
  @discardableResult
  public func readRequestHead() throws -> HostileRequest? {
    try read(body: false)
  }

  private func read(body: Bool) throws -> HostileRequest? {
    var line = ""
    while line.isEmpty {
      guard let next = try reader.readLine(deadline: nil) else { return nil }
      line = next
    }
    let parts = line.split(separator: " ").map(String.init)
    guard parts.count == 3 else { throw HTTPProtocolError("bad request line \(line)") }
    let fields = try reader.readHeaderFields(deadline: nil)
    var count = 0
    if body {
      if HeaderName.value(of: "Transfer-Encoding", in: fields)?.lowercased().contains("chunked")
        == true
      {
        while let chunk = try reader.readChunk(deadline: nil) { count += chunk.count }
      } else if let length = HeaderName.value(of: "Content-Length", in: fields).flatMap(Int.init) {
        count = try reader.read(count: length, deadline: nil).count
      }
    }
    let request = HostileRequest(
      method: parts[0], target: parts[1], headerFields: fields, bodyByteCount: count,
      connectionNumber: number)
    core.state.withLock { $0.requests.append(request) }
    return request
  }

  /// Sends `bytes` exactly as given.
  public func send(_ bytes: Data) throws {
    try socket.send(bytes)
  }

  /// Sends the UTF-8 text `text` exactly as given (write `\r\n` yourself).
  public func send(_ text: String) throws {
    try send(Data(text.utf8))
  }

  /// Sends `bytes` one at a time, `interval` apart, until all are sent, the client goes away
  /// or the server stops.
  public func trickle(_ bytes: Data, every interval: Duration) {
    for byte in bytes {
      guard !isStopped, (try? socket.send([byte])) != nil else { return }
      guard pause(interval) else { return }
    }
  }

  /// Writes `chunk` over and over as fast as the socket takes it, adding every byte the kernel
  /// accepted to the server's `floodedByteCount`, until `limit` bytes were written by this
  /// connection, the client goes away or the server stops. Returns the bytes written.
  ///
  /// The limit keeps a test against a client without backpressure from filling the machine.
  @discardableResult
  public func flood(_ chunk: Data, limit: Int) -> Int {
    var written = 0
    let bytes = [UInt8](chunk)
    while written < limit, !isStopped {
      var offset = 0
      while offset < bytes.count {
        let count = bytes.withUnsafeBytes { raw in
          Self.platformSend(socket.descriptor, raw.baseAddress! + offset, raw.count - offset)
        }
        if count > 0 {
          offset += count
          written += count
          core.flooded.add(count, ordering: .relaxed)
        } else if count < 0 && errno == EINTR {
          continue
        } else {
          return written
        }
      }
    }
    return written
  }

  /// Connects to `127.0.0.1:port`, sends it `first`, then whatever this connection received
  /// beyond what the script read, and relays bytes both ways until either side closes (or
  /// the server stops): the body of a proxy's tunnel.
  ///
  /// - Throws: when `port` refuses the connection.
  public func relay(toLoopbackPort port: UInt16, first: Data) throws {
    let upstream = try Socket.connectToLoopback(port: port)
    defer { upstream.close() }
    try upstream.send(first + Data(reader.buffered))
    let client = socket
    let done = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
    // Upstream → client on a thread of its own; client → upstream here.
    let back = Thread {
      while !done.load(ordering: .relaxed),
        let bytes = try? upstream.receive(), !bytes.isEmpty,
        (try? client.send(bytes)) != nil
      {}
      done.store(true, ordering: .relaxed)
      client.shutdown()
      finished.signal()
    }
    back.start()
    while !isStopped, !done.load(ordering: .relaxed) {
      guard let readable = try? client.waitUntilReadable(timeout: .milliseconds(50)) else { break }
      guard readable else { continue }
      guard let bytes = try? client.receive(), !bytes.isEmpty, (try? upstream.send(bytes)) != nil
      else { break }
    }
    done.store(true, ordering: .relaxed)
    upstream.shutdown()
    finished.wait()
  }

  /// Ends the server's sending side (a FIN) while the connection stays open for reading.
  public func closeWrite() {
    #if canImport(Darwin)
    _ = Darwin.shutdown(socket.descriptor, SHUT_WR)
    #else
    _ = Glibc.shutdown(socket.descriptor, Int32(SHUT_WR))
    #endif
  }

  /// Waits, reading and discarding whatever arrives, until the client closes the connection
  /// or the server stops.
  public func holdUntilClosed() {
    while !isStopped {
      guard let readable = try? socket.waitUntilReadable(timeout: .milliseconds(50)) else {
        return
      }
      guard readable else { continue }
      guard let bytes = try? socket.receive(), !bytes.isEmpty else { return }
    }
  }

  /// Waits without reading anything until the server stops (or the client resets the
  /// connection): what a client sends piles up in the socket buffers.
  public func holdWithoutReading() {
    while !isStopped {
      var entry = pollfd(fd: socket.descriptor, events: 0, revents: 0)
      let result = poll(&entry, 1, 50)
      if result > 0 && entry.revents & Int16(POLLHUP | POLLERR) != 0 { return }
    }
  }

  /// Waits until `condition` holds (checked every 2 ms) or `timeout` passes; returns whether
  /// it held. Ends early, returning `false`, when the server stops.
  public func wait(
    until condition: () -> Bool, timeout: Duration
  ) -> Bool {
    let deadline = Deadline.after(timeout)
    while !condition() {
      if deadline.hasPassed || isStopped { return false }
      guard pause(.milliseconds(2)) else { return false }
    }
    return true
  }

  /// Blocks this connection's thread for `duration`; `false` when the server stopped.
  private func pause(_ duration: Duration) -> Bool {
    let deadline = Deadline.after(duration)
    while !deadline.hasPassed {
      if isStopped { return false }
      _ = core.stopSignal.wait(
        timeout: .now() + min(deadline.remaining, .milliseconds(50)).dispatchInterval)
    }
    return !isStopped
  }

  private static func platformSend(
    _ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int
  ) -> Int {
    #if canImport(Darwin)
    return Darwin.send(descriptor, bytes, count, 0)
    #else
    return Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
    #endif
  }
}

/// The listener, the counters and the threads behind a `HostileServer`; separate so that the
/// threads do not keep the public object alive.
final class HostileServerCore: Sendable {
  struct State: Sendable {
    var accepted = 0
    var open: [Int: Socket] = [:]
    var peakOpen = 0
    var requests: [HostileRequest] = []
    var isStopped = false
  }

  let port: UInt16
  let state = LockedState(State())
  let flooded = Atomic<Int>(0)
  /// Never signalled: a wait on it is a pause that `stop()` shortens by shutting sockets down
  /// (scripts re-check `isStopped` at least every 50 ms).
  let stopSignal = DispatchSemaphore(value: 0)
  private let listener: Socket
  private let script: @Sendable (HostileConnection) throws -> Void
  private let acceptLoopEnded = DispatchSemaphore(value: 0)
  private let threads = DispatchGroup()

  init(script: @escaping @Sendable (HostileConnection) throws -> Void) throws {
    (listener, port) = try Socket.listenOnLoopback()
    self.script = script
  }

  var isStopped: Bool { state.withLock { $0.isStopped } }

  func startAccepting() {
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  private func acceptLoop() {
    // `stop()` closes the listener once this loop ended (see `ServerCore.acceptLoop`).
    defer { acceptLoopEnded.signal() }
    while !isStopped {
      guard let readable = try? listener.waitUntilReadable(timeout: .milliseconds(50)) else {
        return
      }
      guard readable, let socket = try? listener.accept() else { continue }
      let number = state.withLock { state -> Int? in
        guard !state.isStopped else { return nil }
        state.accepted += 1
        state.open[state.accepted] = socket
        state.peakOpen = max(state.peakOpen, state.open.count)
        return state.accepted
      }
      guard let number else {
        socket.close()
        return
      }
      threads.enter()
      Thread.detachNewThread { [self] in
        let connection = HostileConnection(core: self, socket: socket, number: number)
        try? script(connection)
        // Unlisted and closed in one step, so `stop()` never shuts down a reused number.
        state.withLock { state in
          state.open.removeValue(forKey: number)
          socket.close()
        }
        threads.leave()
      }
    }
  }

  func stop() {
    let wasRunning = state.withLock { state -> Bool in
      guard !state.isStopped else { return false }
      state.isStopped = true
      // Inside the lock: a connection's thread closes its descriptor only under it.
      for socket in state.open.values { socket.shutdown() }
      return true
    }
    guard wasRunning else { return }
    listener.shutdown()
    // Not on the caller's thread: see `ServerCore.stop()`.
    Thread.detachNewThread { [self] in
      if acceptLoopEnded.wait(timeout: .now() + 2) == .success { listener.close() }
      _ = threads.wait(timeout: .now() + 2)
    }
  }
}
