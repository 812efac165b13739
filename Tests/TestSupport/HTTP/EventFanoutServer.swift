import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server-sent-events server on 127.0.0.1 that holds hundreds of streams on one thread: each
/// request gets a `text/event-stream` head and one event at once, and its connection stays
/// open until the client closes it or the server stops.
///
/// For tests that count a client's threads and sockets: unlike `TestHTTPServer` (a thread per
/// connection), it adds one thread whatever the number of streams.
///
/// ```swift
/// let server = try EventFanoutServer(event: "hello")
/// // 200 clients open server.url(for: "/events") …
/// try await waitUntil { server.openConnectionCount == 200 }
/// ```
public final class EventFanoutServer: Sendable {
  private let core: EventFanoutCore

  /// Starts listening; every stream receives the event `data: <event>`.
  public init(event: String) throws {
    core = try EventFanoutCore(event: event)
  }

  // Without waiting for the loop's thread: the last reference usually goes at the end of an
  // async test, on one of Swift concurrency's few threads.
  deinit { core.stop(waiting: false) }

  /// The port the server listens on.
  public var port: UInt16 { core.port }

  /// The URL of `path` on this server (every path serves the stream).
  public func url(for path: String) -> URL {
    URL(string: "http://127.0.0.1:\(port)\(path.hasPrefix("/") ? path : "/" + path)")!
  }

  /// How many connections are open now.
  public var openConnectionCount: Int { core.state.withLock { $0.open } }

  /// How many requests have been answered with the stream.
  public var answeredCount: Int { core.state.withLock { $0.answered } }

  /// Closes the listener and every stream, then returns.
  public func stop() { core.stop() }
}

/// The listener and the one thread behind an `EventFanoutServer`; separate so that the thread
/// does not keep the public object alive.
private final class EventFanoutCore: Sendable {
  struct State: Sendable {
    var open = 0
    var answered = 0
    var isStopped = false
  }

  let port: UInt16
  let state = LockedState(State())
  private let listener: Socket
  private let loopEnded = DispatchSemaphore(value: 0)

  init(event: String) throws {
    (listener, port) = try Socket.listenOnLoopback(backlog: 512)
    let body = "data: \(event)\n\n"
    let answer = Data(
      ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n"
        + String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n").utf8)
    Thread.detachNewThread { [self] in loop(answer: answer) }
  }

  func stop(waiting: Bool = true) {
    let first = state.withLock { state -> Bool in
      defer { state.isStopped = true }
      return !state.isStopped
    }
    guard first, waiting else { return }
    _ = loopEnded.wait(timeout: .now() + 2)
  }

  private struct Connection {
    var socket: Socket
    var head: [UInt8] = []
    var answered = false
  }

  private func loop(answer: Data) {
    var connections: [Int32: Connection] = [:]
    defer {
      for connection in connections.values { connection.socket.close() }
      listener.close()
      state.withLock { $0.open = 0 }
      loopEnded.signal()
    }
    while !state.withLock({ $0.isStopped }) {
      var entries = [pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)]
      entries += connections.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      guard poll(&entries, nfds_t(entries.count), 20) > 0 else { continue }
      for entry in entries where entry.revents != 0 {
        if entry.fd == listener.descriptor {
          // One accept per wake-up; the listener polls readable again while more are queued.
          if let socket = try? listener.accept() {
            connections[socket.descriptor] = Connection(socket: socket)
            state.withLock { $0.open += 1 }
          }
          continue
        }
        guard var connection = connections[entry.fd] else { continue }
        let bytes = (try? connection.socket.receive()) ?? []
        if bytes.isEmpty {
          connection.socket.close()
          connections[entry.fd] = nil
          state.withLock { $0.open -= 1 }
          continue
        }
        if !connection.answered {
          connection.head += bytes
          if Self.containsBlankLine(connection.head) {
            connection.answered = true
            connection.head = []
            if (try? connection.socket.send(answer)) != nil {
              state.withLock { $0.answered += 1 }
            }
          }
        }
        connections[entry.fd] = connection
      }
    }
  }

  /// Whether `bytes` hold the `\r\n\r\n` that ends a request head.
  private static func containsBlankLine(_ bytes: [UInt8]) -> Bool {
    guard bytes.count >= 4 else { return false }
    return (0...(bytes.count - 4)).contains { index in
      bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13
        && bytes[index + 3] == 10
    }
  }
}
