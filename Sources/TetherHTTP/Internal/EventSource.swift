import Foundation
import Streams
import Tether
import TetherSupport

/// One open `text/event-stream` response, read event by event as its consumer asks: the
/// engine reads the socket only as fast as events are taken (``StreamBody``). Dropping it
/// closes the connection.
final class EventSource: Sendable {
  private struct State {
    var parser: ServerSentEventParser
    var pending: [ServerSentEvent] = []
    var delivered = 0
  }

  let status: Int
  let headers: [String: String]
  private let reader: StreamBody.Reader
  private let url: URL
  private let state: Lock<State>

  init(_ response: StreamedResponse, url: URL, limit: Int) {
    status = response.status
    headers = response.headers
    reader = StreamBody.Reader(response.body)
    self.url = url
    state = Lock(State(parser: ServerSentEventParser(limit: limit)))
  }

  /// The last event ID the server set, for `Last-Event-ID` on reconnection.
  var lastEventID: String? { state.withLock { $0.parser.lastEventID } }
  /// The reconnection time the server asked for, in milliseconds.
  var retry: Int? { state.withLock { $0.parser.retry } }
  /// How many events were handed out.
  var deliveredCount: Int { state.withLock { $0.delivered } }

  /// The next event, or `nil` when the server ended the stream.
  ///
  /// - Throws: ``HTTPError`` (the connection failed, the server went silent, an event passed
  ///   the size limit) or `CancellationError`.
  func next() async throws -> ServerSentEvent? {
    while true {
      let ready = state.withLock { state -> ServerSentEvent? in
        guard !state.pending.isEmpty else { return nil }
        state.delivered += 1
        return state.pending.removeFirst()
      }
      if let ready { return ready }
      guard let chunk = try await reader.body.next() else { return nil }
      try state.withLock { state throws(HTTPError) in
        do throws(ServerSentEventParser.TooLarge) {
          state.pending = try state.parser.feed(chunk)
        } catch {
          throw .tooLarge(url: HTTPError.redacted(url), limit: state.parser.limit)
        }
      }
    }
  }

  /// Ends the stream now.
  func cancel() {
    reader.body.consumerGone()
  }
}
