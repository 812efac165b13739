import Dispatch
import Foundation
import Synchronization

/// The state and threads behind a `TestHTTPServer`.
///
/// Separate from the public class so that the accept and connection threads, which hold the
/// core, do not keep the server alive: dropping the last `TestHTTPServer` reference stops it.
final class ServerCore: Sendable {
  struct QueuedFault: Sendable {
    var path: String?
    var fault: HTTPFault
    var remaining: Int
  }

  struct OpenConnection: Sendable {
    var socket: Socket
    var waker: DispatchSemaphore
  }

  struct State: Sendable {
    var documents: [String: HTTPDocument] = [:]
    var handlers: [String: @Sendable (RecordedRequest) -> HTTPResponse] = [:]
    var queuedFaults: [QueuedFault] = []
    var persistentFaults: [(path: String?, fault: HTTPFault)] = []
    var requests: [RecordedRequest] = []
    var requestsSeen = 0
    var connectionsAccepted = 0
    var openConnections: [Int: OpenConnection] = [:]
    var isStopped = false
  }

  /// What a connection does for one request, decided atomically when the request arrives.
  struct Plan: Sendable {
    var fault: HTTPFault?
    var document: HTTPDocument?
    var handler: (@Sendable (RecordedRequest) -> HTTPResponse)?
  }

  let port: UInt16
  private let listener: Socket
  // Guards documents, handlers, faults, the request log and the open connections.
  let state = LockedState(State())
  private let acceptLoopEnded = DispatchSemaphore(value: 0)
  private let connectionThreads = DispatchGroup()

  init() throws {
    (listener, port) = try Socket.listenOnLoopback()
  }

  func startAccepting() {
    Thread.detachNewThread { [self] in
      acceptLoop()
    }
  }

  /// `State.isStopped`, readable without the lock: every connection thread checks it per
  /// request, and taking the shared lock for it made the threads queue on each other.
  private let stopped = Atomic<Bool>(false)

  var isStopped: Bool { stopped.load(ordering: .acquiring) }

  private func acceptLoop() {
    // The listener is closed by `stop()` once this loop has ended, never here: `stop()` shuts
    // it down after setting `isStopped`, and a descriptor closed in between could already
    // belong to another test's socket by then.
    defer { acceptLoopEnded.signal() }
    let resourcePause = DispatchSemaphore(value: 0)
    while !isStopped {
      // A short poll timeout: shutting down a listening socket does not wake a blocked
      // `accept` on every platform, so the loop re-checks `isStopped` instead.
      guard let readable = try? listener.waitUntilReadable(timeout: .milliseconds(50)) else {
        return
      }
      guard readable else { continue }
      let accepted: Socket?
      do {
        accepted = try listener.accept()
      } catch let error as SocketError where error.isResourceShortage {
        // Out of descriptors or memory: the connection stays queued; retry shortly instead
        // of spinning on a listener that keeps polling readable.
        _ = resourcePause.wait(timeout: .now() + .milliseconds(10))
        continue
      } catch {
        if !isStopped {
          FileHandle.standardError.write(
            Data("TestHTTPServer on port \(port) stopped accepting: \(error)\n".utf8))
        }
        return
      }
      guard let socket = accepted else { continue }
      let waker = DispatchSemaphore(value: 0)
      let number = state.withLock { state -> Int? in
        guard !state.isStopped else { return nil }
        state.connectionsAccepted += 1
        state.openConnections[state.connectionsAccepted] = OpenConnection(
          socket: socket, waker: waker)
        return state.connectionsAccepted
      }
      guard let number else {
        socket.close()
        return
      }
      connectionThreads.enter()
      Thread.detachNewThread { [self] in
        let connection = HTTPConnection(core: self, socket: socket, number: number, waker: waker)
        connection.run()
        // Unlisted and closed in one step: `stop()` shuts down only listed descriptors, under
        // the same lock, so it never reaches a number the system has handed out again.
        state.withLock { state in
          state.openConnections.removeValue(forKey: number)
          connection.closeSocket()
        }
        connectionThreads.leave()
      }
    }
  }

  /// Stops accepting and wakes and ends every connection, without waiting for their threads
  /// (a thread of its own closes the listener once the accept loop has ended).
  func stop() {
    let open = state.withLock { state -> [OpenConnection]? in
      guard !state.isStopped else { return nil }
      state.isStopped = true
      stopped.store(true, ordering: .releasing)
      // Inside the lock: a connection's thread closes its descriptor only under it.
      for connection in state.openConnections.values { connection.socket.shutdown() }
      return Array(state.openConnections.values)
    }
    guard let open else { return }
    listener.shutdown()
    for connection in open { connection.waker.signal() }
    // Waiting for the threads to end happens on a thread of its own: `stop()` runs from the
    // server's `deinit` at the end of an async test, on one of Swift concurrency's threads
    // (two on CI), and blocking it for the accept loop's next poll stalled every other test.
    Thread.detachNewThread { [self] in
      // The loop no longer touches the listener once it ended; if it has not ended (a
      // stall), the descriptor is left open rather than closed under it.
      if acceptLoopEnded.wait(timeout: .now() + 2) == .success { listener.close() }
      _ = connectionThreads.wait(timeout: .now() + 2)
    }
  }

  /// Records `request` and decides how to answer it.
  func admit(_ request: RecordedRequestDraft, connection: Int) -> (RecordedRequest, Plan) {
    state.withLock { state in
      state.requestsSeen += 1
      let recorded = request.recorded(connection: connection, sequence: state.requestsSeen)
      state.requests.append(recorded)
      var plan = Plan()
      let path = recorded.path
      if let index = state.queuedFaults.firstIndex(where: { $0.path == nil || $0.path == path }) {
        plan.fault = state.queuedFaults[index].fault
        state.queuedFaults[index].remaining -= 1
        if state.queuedFaults[index].remaining <= 0 { state.queuedFaults.remove(at: index) }
      } else if let persistent = state.persistentFaults.last(where: {
        $0.path == nil || $0.path == path
      }) {
        plan.fault = persistent.fault
      }
      plan.document = state.documents[path]
      plan.handler = state.handlers[path]
      return (recorded, plan)
    }
  }
}

/// A request as parsed, before the server numbers it.
struct RecordedRequestDraft: Sendable {
  var method: String
  var target: String
  var version: String
  var headerFields: [(name: String, value: String)]
  var body: Data
  var arrival: ContinuousClock.Instant
  var date: Date

  func header(_ name: String) -> String? {
    HeaderName.value(of: name, in: headerFields)
  }

  /// Whether the client lets the connection stay open after the response.
  var keepsAlive: Bool {
    let connection = header("Connection")?.lowercased() ?? ""
    if version == "HTTP/1.0" { return connection.contains("keep-alive") }
    return !connection.contains("close")
  }

  func recorded(connection: Int, sequence: Int) -> RecordedRequest {
    let pathEnd = target.utf8.firstIndex(of: UInt8(ascii: "?"))
    let path = String(target[..<(pathEnd ?? target.endIndex)])
    let query = pathEnd.map { String(target[target.utf8.index(after: $0)...]) }
    return RecordedRequest(
      method: method, path: path, query: query, headerFields: headerFields, body: body,
      arrival: arrival, date: date, connectionNumber: connection, sequenceNumber: sequence)
  }
}
