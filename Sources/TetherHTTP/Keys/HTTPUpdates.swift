/// How an `.http` shared value learns about changes on the server.
///
/// ```swift
/// @SharedReader(.http(API.status, client: api, every: .seconds(30))) var status = Status()
/// @SharedReader(.http(API.status, client: api, updates: .serverSentEvents(API.statusEvents)))
/// var liveStatus = Status()
/// ```
public struct HTTPUpdates: Sendable {
  enum Kind: Sendable {
    case polling(Duration)
    case serverSentEvents(HTTPRequestTemplate)
  }

  let kind: Kind

  /// Conditional `GET`s every `interval` (`If-None-Match`/`If-Modified-Since`; a 304 costs
  /// no decoding). After failures the wait doubles (with jitter) up to 16 × `interval`, and
  /// is never shorter than the server's `Retry-After` (itself capped at that maximum).
  public static func polling(every interval: Duration) -> HTTPUpdates {
    HTTPUpdates(kind: .polling(max(interval, .milliseconds(1))))
  }

  /// A `text/event-stream` endpoint pushes changes: an event whose data decodes as the
  /// value replaces it; an event with empty data means "changed" and is followed by a
  /// conditional `GET`. When the stream ends or fails, it reconnects with back-off (and
  /// `Last-Event-ID`), then catches up with a conditional `GET`.
  public static func serverSentEvents<Parameters>(
    _ endpoint: Endpoint<Parameters, NoBody, some Sendable>, _ parameters: Parameters
  ) -> HTTPUpdates {
    HTTPUpdates(
      kind: .serverSentEvents(
        HTTPRequestTemplate { client throws(HTTPError) in
          var request = try client.request(for: endpoint, parameters, body: NoBody())
          request.setHeader("Accept", "text/event-stream")
          return request
        }))
  }

  /// A `text/event-stream` endpoint without parameters pushes changes; see
  /// ``serverSentEvents(_:_:)``.
  public static func serverSentEvents(
    _ endpoint: Endpoint<NoParameters, NoBody, some Sendable>
  ) -> HTTPUpdates {
    serverSentEvents(endpoint, NoParameters())
  }
}

/// Builds a request with a client (an endpoint with its parameters, type-erased).
struct HTTPRequestTemplate: Sendable {
  let make: @Sendable (HTTPClient) throws(HTTPError) -> HTTPRequest
}
