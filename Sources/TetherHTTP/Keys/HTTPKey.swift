import Foundation
import Streams
import Synchronization
import Tether
import TetherSupport

/// A shared value read from an HTTP endpoint and kept fresh: by conditional polling or by
/// server-sent events.
///
/// Create one with `.http(_:_:client:every:)` or `.http(_:_:client:updates:)`:
///
/// ```swift
/// @SharedReader(.http(GitHub.repos, UserRepos(user: "apple"), client: api, every: .seconds(60)))
/// var appleRepos: [Repo] = []
/// ```
///
/// - Loading is one `GET`; a failure leaves the declared default and sets `loadError`.
/// - While anyone holds the value, it stays fresh: polls are conditional (`ETag` with
///   `If-None-Match`, `Last-Modified` with `If-Modified-Since`), so an unchanged resource
///   costs a 304 and no decoding. Failures set `loadError`, keep the value and back off;
///   401 and 403 stop the updates (with `loadError`) until the value is loaded again.
/// - When the last holder goes away, polling stops (or the event stream closes).
/// - Its ``id`` is the method, the full URL (base URL, filled path, query) and the value
///   type: two declarations of the same resource share one value.
public struct HTTPKey<Parameters: Encodable & Sendable, Response: Sendable>: SharedReaderKey {
  /// Identifies the resource: method, URL and value type.
  public struct ID: Hashable, Sendable {
    let method: String
    let url: String
    let type: ObjectIdentifier
  }

  /// The endpoint that reads the resource.
  public let endpoint: Endpoint<Parameters, NoBody, Response>
  /// The endpoint's parameters.
  public let parameters: Parameters
  /// The client that sends the requests.
  public let client: HTTPClient
  let updates: HTTPUpdates
  let validators: Validators

  init(
    _ endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    client: HTTPClient, updates: HTTPUpdates
  ) {
    self.endpoint = endpoint
    self.parameters = parameters
    self.client = client
    self.updates = updates
    validators = Validators()
  }

  /// The method, the full URL and the value type.
  public var id: ID {
    let url: String
    do {
      url = try endpoint.url(
        relativeTo: client.baseURL, parameters, remembered: client.endpointURLs
      ).absoluteString
    } catch {
      url = "invalid \(endpoint.path): \(error)"
    }
    return ID(method: endpoint.method.rawValue, url: url, type: ObjectIdentifier(Response.self))
  }

  /// Loads the resource with one `GET`.
  public func load(context: LoadContext<Response>, continuation: LoadContinuation<Response>) {
    Task {
      do {
        guard case .value(let value, let version) = try await fetch(conditional: false) else {
          return continuation.resume(throwing: HTTPError.cancelled)
        }
        continuation.resume(returning: value, version: version)
      } catch {
        continuation.resume(throwing: error)
      }
    }
  }

  /// Keeps the value fresh until the subscription is cancelled.
  public func subscribe(
    context: LoadContext<Response>, subscriber: SharedSubscriber<Response>
  ) -> SharedSubscription {
    let task: Task<Void, Never>
    switch updates.kind {
    case .polling(let interval):
      task = Task { await poll(every: interval, subscriber) }
    case .serverSentEvents(let template):
      task = Task { await listen(template, subscriber) }
    }
    return SharedSubscription { task.cancel() }
  }

  // MARK: - Fetching

  enum Fetched {
    /// Not modified since the validators sent, or (for an ordered read) an answer that may be
    /// older than one of this key's own writes: nothing to deliver.
    case notModified
    /// The representation and its version (its validators; `nil` when it has none).
    case value(Response, SharedVersion?)
  }

  /// One `GET`; conditional when asked and validators are known. Returns the value with the
  /// version its validators name, the one a resource key's save derived from it must find.
  /// An `ordered` read (a poll) whose answer may be older than one of this key's own writes
  /// answers `.notModified`: a holder's value never goes back to before its own save.
  func fetch(
    conditional: Bool, ordered: Bool = false
  ) async throws(HTTPError) -> Fetched {
    var request = try client.request(for: endpoint, parameters, body: NoBody())
    let (etag, lastModified) = validators.current
    if conditional, let etag { request.setHeader("If-None-Match", etag) }
    if conditional, let lastModified { request.setHeader("If-Modified-Since", lastModified) }
    let ticket = validators.beginRead()
    let response = try await client.response(for: request)
    if conditional, response.status == 304 { return .notModified }
    if response.status == 404 { validators.recordAbsent(readWith: ordered ? ticket : nil) }
    let value = try endpoint.decode(response, url: request.url)
    guard let version = validators.record(response, readWith: ordered ? ticket : nil) else {
      return .notModified
    }
    return .value(value, version)
  }

  /// The read-back of this key's own write, whose answer had no representation: one
  /// unconditional `GET`. When it holds exactly the bytes `sent`, its version is the write's;
  /// otherwise (fields the server computes, or another writer's change that landed after the
  /// write and before this read) `sameBytes` is `false`, and the holders must take it.
  func readBack(
    sent: Data?
  ) async throws(HTTPError) -> (Response, SharedVersion?, sameBytes: Bool) {
    let request = try client.request(for: endpoint, parameters, body: NoBody())
    let response = try await client.response(for: request)
    let value = try endpoint.decode(response, url: request.url)
    return (value, validators.recordOwnWrite(response), response.body == sent)
  }

  // MARK: - Polling

  private func poll(every interval: Duration, _ subscriber: SharedSubscriber<Response>) async {
    var failures = 0
    var delay = interval
    while true {
      do {
        try await Task.sleep(for: delay)
      } catch {
        return
      }
      do {
        if case .value(let value, let version) = try await fetch(conditional: true, ordered: true) {
          subscriber.yield(value, version: version)
        }
        failures = 0
        delay = interval
      } catch {
        if Task.isCancelled || error == .cancelled { return }
        subscriber.yield(throwing: error)
        if error.statusCode == 401 || error.statusCode == 403 { return }
        failures += 1
        // Full jitter above the interval, doubling per failure up to 16 intervals; at least
        // the server's `Retry-After`, itself never beyond that cap.
        let backoff = Backoff(initial: interval * 2, maximum: interval * 16, minimum: interval)
        delay =
          backoff.delay(
            afterFailures: failures, retryAfter: error.retryAfter.map { .clamped(seconds: $0) })
          ?? interval * 16
      }
    }
  }

  // MARK: - Server-sent events

  private func listen(
    _ template: HTTPRequestTemplate, _ subscriber: SharedSubscriber<Response>
  ) async {
    var failures = 0
    var lastEventID: String?
    var retry: Duration?
    while !Task.isCancelled {
      var request: HTTPRequest
      do {
        request = try template.make(client)
      } catch {
        return subscriber.yield(throwing: error)
      }
      if let lastEventID { request.setHeader("Last-Event-ID", lastEventID) }
      let outcome = await stream(request, subscriber, lastEventID: &lastEventID, retry: &retry)
      if Task.isCancelled { return }
      switch outcome {
      case .ended(let delivered):
        // A stream that ends before delivering anything is no better than a failure: without
        // this, `retry: 0` and an empty answer made thousands of reconnections a second.
        failures = delivered ? 0 : failures + 1
      case .failed(let error):
        subscriber.yield(throwing: error)
        if error.statusCode == 401 || error.statusCode == 403 { return }
        failures += 1
      }
      let wait =
        Self.reconnectionBackoff(retry: retry).delay(afterFailures: failures) ?? .seconds(60)
      do {
        try await Task.sleep(for: wait)
      } catch {
        return
      }
    }
  }

  /// The wait before reconnecting an event stream: the server's `retry`, but never under one
  /// second (the floor keeps a hostile or broken server from making a client reconnect in a
  /// loop), growing with full jitter per failure up to a minute.
  static func reconnectionBackoff(retry: Duration?) -> Backoff {
    let base = max(retry ?? .seconds(1), .seconds(1))
    return Backoff(initial: base * 2, maximum: max(base, .seconds(60)), minimum: base)
  }

  private enum StreamOutcome {
    /// The server ended the stream; `delivered` says whether any event came first.
    case ended(delivered: Bool)
    case failed(HTTPError)
  }

  /// Reads one connection of the event stream until it ends.
  private func stream(
    _ request: HTTPRequest, _ subscriber: SharedSubscriber<Response>,
    lastEventID: inout String?, retry: inout Duration?
  ) async -> StreamOutcome {
    let events: EventSource
    do {
      events = try await client.openEvents(request)
    } catch {
      return .failed(error)
    }
    defer { events.cancel() }
    guard events.status == 200 else {
      return .failed(
        .status(
          events.status, url: HTTPError.redacted(request.url), bodyExcerpt: "",
          retryAfter: events.headers["retry-after"].flatMap { HeaderParsing.retryAfter($0) }))
    }
    // Catch up with what changed while no stream was open.
    await refresh(subscriber)
    var delivered = false
    while true {
      let event: ServerSentEvent?
      do {
        event = try await events.next()
      } catch let error as HTTPError {
        return .failed(error)
      } catch {
        return .failed(.cancelled)
      }
      lastEventID = events.lastEventID ?? lastEventID
      retry = events.retry.map { .milliseconds($0) } ?? retry
      guard let event else { return .ended(delivered: delivered) }
      delivered = true
      await deliver(event, subscriber, url: request.url)
    }
  }

  private func deliver(
    _ event: ServerSentEvent, _ subscriber: SharedSubscriber<Response>, url: URL
  ) async {
    if event.data.isEmpty { return await refresh(subscriber) }
    do {
      let value = try endpoint.decode(Data(event.data.utf8), url: url)
      validators.deliveredWithoutVersion()
      subscriber.yield(value)
    } catch {
      subscriber.yield(throwing: error)
    }
  }

  private func refresh(_ subscriber: SharedSubscriber<Response>) async {
    do {
      if case .value(let value, let version) = try await fetch(conditional: true, ordered: true) {
        subscriber.yield(value, version: version)
      }
    } catch {
      if error != .cancelled { subscriber.yield(throwing: error) }
    }
  }
}

extension SharedReaderKey {
  /// A value read from `endpoint` with `parameters` and polled conditionally every
  /// `interval` while anyone holds it.
  ///
  /// ```swift
  /// @SharedReader(.http(API.status, StatusQuery(region: "eu"), client: api, every: .seconds(30)))
  /// var status = Status.unknown
  /// ```
  public static func http<Parameters, Response>(
    _ endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    client: HTTPClient, every interval: Duration
  ) -> Self where Self == HTTPKey<Parameters, Response> {
    HTTPKey(endpoint, parameters, client: client, updates: .polling(every: interval))
  }

  /// A value read from `endpoint` with `parameters` and kept fresh by `updates` (polling or
  /// server-sent events) while anyone holds it.
  public static func http<Parameters, Response>(
    _ endpoint: Endpoint<Parameters, NoBody, Response>, _ parameters: Parameters,
    client: HTTPClient, updates: HTTPUpdates
  ) -> Self where Self == HTTPKey<Parameters, Response> {
    HTTPKey(endpoint, parameters, client: client, updates: updates)
  }

  /// A value read from a parameterless `endpoint`, polled every `interval`.
  public static func http<Response>(
    _ endpoint: Endpoint<NoParameters, NoBody, Response>, client: HTTPClient,
    every interval: Duration
  ) -> Self where Self == HTTPKey<NoParameters, Response> {
    HTTPKey(endpoint, NoParameters(), client: client, updates: .polling(every: interval))
  }

  /// A value read from a parameterless `endpoint`, kept fresh by `updates`.
  public static func http<Response>(
    _ endpoint: Endpoint<NoParameters, NoBody, Response>, client: HTTPClient,
    updates: HTTPUpdates
  ) -> Self where Self == HTTPKey<NoParameters, Response> {
    HTTPKey(endpoint, NoParameters(), client: client, updates: updates)
  }
}
