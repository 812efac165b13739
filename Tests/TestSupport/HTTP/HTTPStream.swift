import Dispatch
import Foundation
import Synchronization

/// A chunked response body that stays open until the test ends it, for streaming clients such
/// as an etcd watch.
///
/// Serve it with `HTTPFault.stream(_:)`. Each request that gets the stream receives the
/// status and headers at once, then every chunk sent so far, then each new chunk as the test
/// sends it, until `finish()` (a proper end of the body; the connection stays usable) or
/// `abort()` (the connection closes without the terminating chunk).
///
/// ```swift
/// let watch = HTTPStream()
/// server.inject(.stream(watch), at: "/v3/watch")
/// // start the client …
/// try await watch.waitForClients(1)
/// watch.send(#"{"result":{"events":[]}}"# + "\n")
/// watch.finish()
/// ```
///
/// All methods are thread-safe.
public final class HTTPStream: Sendable {
  enum End: Sendable, Equatable {
    case open
    case finished
    case aborted
  }

  private struct State {
    var chunks: [Data] = []
    var end = End.open
    var clients: [Int: DispatchSemaphore] = [:]
    var totalClients = 0
  }

  /// The response status code.
  public let status: Int
  /// The `Content-Type` header value.
  public let contentType: String
  /// Extra response headers.
  public let headers: [String: String]
  // Guards the chunks sent so far, how the stream ended, and the connections attached to it.
  private let state = LockedState(State())

  /// Creates an open stream; nothing is sent until a request receives it.
  public init(
    status: Int = 200, contentType: String = "application/json", headers: [String: String] = [:]
  ) {
    self.status = status
    self.contentType = contentType
    self.headers = headers
  }

  /// An open `text/event-stream` response, for server-sent events; send events with
  /// `sendEvent(_:id:event:)`.
  public static func serverSentEvents(headers: [String: String] = [:]) -> HTTPStream {
    HTTPStream(contentType: "text/event-stream", headers: headers)
  }

  /// Sends one server-sent event: an optional `event:` and `id:` line, one `data:` line per
  /// line of `data`, and the blank line that ends the event.
  public func sendEvent(_ data: String, id: String? = nil, event: String? = nil) {
    var text = ""
    if let event { text += "event: \(event)\n" }
    if let id { text += "id: \(id)\n" }
    for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
      text += "data: \(line)\n"
    }
    send(text + "\n")
  }

  /// Sends `chunk` to every attached client and to every later one.
  ///
  /// Empty chunks are skipped (an empty chunk would end the body); chunks sent after
  /// `finish()` or `abort()` are ignored.
  public func send(_ chunk: Data) {
    guard !chunk.isEmpty else { return }
    let wakers = state.withLock { state -> [DispatchSemaphore] in
      guard state.end == .open else { return [] }
      state.chunks.append(chunk)
      return Array(state.clients.values)
    }
    for waker in wakers { waker.signal() }
  }

  /// Sends `text` as one UTF-8 chunk.
  public func send(_ text: String) {
    send(Data(text.utf8))
  }

  /// Ends the body properly (the terminating zero-length chunk) after the chunks already sent.
  public func finish() {
    end(.finished)
  }

  /// Closes every connection serving the stream without the terminating chunk, as a crashed
  /// server would.
  public func abort() {
    end(.aborted)
  }

  /// How many connections are receiving the stream now.
  public var clientCount: Int { state.withLock { $0.clients.count } }

  /// How many connections have received the stream so far, including ended ones.
  public var totalClientCount: Int { state.withLock { $0.totalClients } }

  /// Waits until at least `count` connections are receiving the stream at the same time.
  public func waitForClients(
    _ count: Int = 1, timeout: Duration = Deadline.defaultTimeout
  ) async throws {
    try await waitUntil("\(count) client(s) on the HTTP stream", timeout: timeout) {
      clientCount >= count
    }
  }

  /// Waits until no connection is receiving the stream (the client went away or it ended).
  public func waitForNoClients(timeout: Duration = Deadline.defaultTimeout) async throws {
    try await waitUntil("the HTTP stream's clients to disconnect", timeout: timeout) {
      clientCount == 0
    }
  }

  private func end(_ end: End) {
    let wakers = state.withLock { state -> [DispatchSemaphore] in
      guard state.end == .open else { return [] }
      state.end = end
      return Array(state.clients.values)
    }
    for waker in wakers { waker.signal() }
  }

  // MARK: - Used by the serving connection

  func attach(connection: Int, waker: DispatchSemaphore) {
    state.withLock {
      $0.clients[connection] = waker
      $0.totalClients += 1
    }
  }

  func detach(connection: Int) {
    _ = state.withLock { $0.clients.removeValue(forKey: connection) }
  }

  /// The chunks from index `start` on, and how the stream stands after them.
  func chunks(from start: Int) -> (chunks: ArraySlice<Data>, end: End) {
    state.withLock { ($0.chunks[start...], $0.end) }
  }
}
