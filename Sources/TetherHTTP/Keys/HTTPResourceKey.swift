import Foundation
import Streams
import Synchronization
import Tether
import TetherSupport

/// A writable shared value backed by an HTTP resource: read like ``HTTPKey`` (one `GET`, then
/// conditional polling or server-sent events) and saved with a `PUT` or `PATCH` endpoint that
/// carries `If-Match`.
///
/// ```swift
/// static let profile = Endpoint<UserPath, NoBody, Profile>.get("/users/{id}/profile")
/// static let saveProfile = Endpoint<UserPath, Profile, NoBody>.put("/users/{id}/profile")
///
/// @Shared(.http(API.profile, save: API.saveProfile, UserPath(id: 42), client: api,
///               every: .seconds(30)))
/// var profile = Profile()
/// $profile.withLock { $0.name = "Ada" }       // PUT with If-Match: <the ETag loaded>
/// try await $profile.update { $0.visits += 1 } // exact against other writers: retried on 412
/// ```
///
/// - A save sends `If-Match` with the strong `ETag` of the version its value was derived from
///   (`SaveContinuation.version`: the representation the holders had when the `withLock` body
///   ran, or this process's own later writes over it), so a representation of someone else's
///   that arrived while the body ran makes the save a conflict, not an overwrite. A value
///   delivered without validators (a server-sent event's data) is saved over the validators
///   of the last representation read. A resource that offers no strong `ETag` (none, a weak
///   `W/"…"` one, or a malformed one) is saved with `If-Unmodified-Since` and the
///   `Last-Modified` of that version; one that offers
///   neither cannot be saved conditionally, and the save fails with
///   ``HTTPError/invalidRequest(_:)`` unless the key opted into `lastWriterWins`. When
///   someone else changed the resource first (HTTP 412), the save fails with
///   ``HTTPError/conflict(url:)`` in `saveError` and the newer value is loaded into every
///   holder: the local change is not written over theirs.
/// - The value is always what the server holds: a save answered with a representation (a
///   2xx with a body that decodes as the value) takes that body, so fields the server
///   computes arrive; a save answered without one (204, or a body that does not decode) is
///   followed by one unconditional `GET` of the stored version.
/// - Saves of one value reach the server one at a time, in mutation order.
/// - `update` reads the latest stored value, transforms it and saves it with `If-Match`;
///   on 412 it starts again from the newer value (at most 16 attempts, then
///   ``HTTPError/conflict(url:)``).
public struct HTTPResourceKey<Parameters: Encodable & Sendable, Value: Sendable>: SharedKey,
  AtomicSharedKey
{
  /// The reading half: the same identity, loading and updates as ``HTTPKey``.
  public let reader: HTTPKey<Parameters, Value>
  /// Whether a resource without validators is overwritten without a precondition.
  public let lastWriterWins: Bool
  let write:
    @Sendable (HTTPClient, Value, WritePrecondition) async throws(HTTPError)
      -> (response: HTTPResponseMessage, url: URL, sent: Data?)
  let writes: Writes

  init<SaveResponse>(
    reader: HTTPKey<Parameters, Value>, save: Endpoint<Parameters, Value, SaveResponse>,
    lastWriterWins: Bool = false
  ) {
    self.reader = reader
    self.lastWriterWins = lastWriterWins
    let parameters = reader.parameters
    write = { client, value, precondition throws(HTTPError) in
      var request = try client.request(for: save, parameters, body: value)
      switch precondition {
      case .absent:
        request.setHeader("If-None-Match", "*")
      case .matching(let etag?, _) where !etag.hasPrefix("W/"):
        request.setHeader("If-Match", etag)
      case .matching(_, let lastModified?):
        request.setHeader("If-Unmodified-Since", lastModified)
      case .matching:
        guard lastWriterWins else {
          throw .invalidRequest(
            "\(HTTPError.redacted(request.url)) offers no strong ETag and no Last-Modified, so "
              + "a save cannot be conditional and could overwrite another writer's change; "
              + "opt into lastWriterWins to allow it")
        }
      }
      // A conditional write is safe to repeat: a retry after a lost answer gets a 412.
      let response = try await client.response(for: request)
      if response.status == 412 { throw .conflict(url: HTTPError.redacted(request.url)) }
      _ = try save.decode(response, url: request.url)
      return (response, request.url, request.body)
    }
    writes = Writes()
  }

  /// The same as the reader's: method, URL and value type.
  public var id: HTTPKey<Parameters, Value>.ID { reader.id }

  /// Loads the resource with one `GET`.
  public func load(context: LoadContext<Value>, continuation: LoadContinuation<Value>) {
    reader.load(context: context, continuation: continuation)
  }

  /// Keeps the value fresh (see ``HTTPKey``) and lets a conflicting save load the newer value.
  public func subscribe(
    context: LoadContext<Value>, subscriber: SharedSubscriber<Value>
  ) -> SharedSubscription {
    writes.setSubscriber(subscriber)
    let inner = reader.subscribe(context: context, subscriber: subscriber)
    return SharedSubscription { [writes] in
      writes.setSubscriber(nil)
      inner.cancel()
    }
  }

  /// Saves `value` with `If-Match` on the version it was derived from (`If-None-Match: *` when
  /// that is `SharedVersion.absent`) and resumes with the version written; on 412, reads the
  /// newer representation and hands it over with the conflict.
  public func save(_ value: Value, context: SaveContext, continuation: SaveContinuation) {
    writes.queue.enqueue {
      do throws(HTTPError) {
        let (stored, written, computed) = try await store(
          value, derivedFrom: continuation.version)
        if let written { continuation.resume(version: written) } else { continuation.resume() }
        if computed {
          // The server stored something else than what was sent (fields it computes): the
          // holders take it. Tether ignores its own written version coming back, so it comes
          // without one, and the next save is conditional on the validators it came with.
          reader.validators.deliveredWithoutVersion()
          writes.subscriber(of: Value.self)?.yield(stored)
        }
      } catch {
        guard case .conflict = error else { return continuation.resume(throwing: error) }
        await handOverStored(refusedWith: error, continuation)
      }
    }
  }

  /// Resumes a refused save with what the server stores now, so every holder converges on it.
  private func handOverStored(
    refusedWith conflict: HTTPError, _ continuation: SaveContinuation
  ) async {
    do throws(HTTPError) {
      guard case .value(let stored, let version) = try await reader.fetch(conditional: false)
      else { return continuation.resume(conflict: conflict) }
      continuation.resume(conflict: conflict, storedValue: stored, version: version)
    } catch .status(404, _, _, _) {
      continuation.resume(conflict: conflict, nothingStoredAt: .absent)
    } catch {
      continuation.resume(conflict: conflict)
    }
  }

  /// Reads the latest stored value, applies `transform`, and saves it with `If-Match` (or
  /// `If-None-Match: *` when the resource does not exist), starting again on 412 after a
  /// jittered back-off (`UpdateRetry`, the policy of every `update`), for up to 30 seconds.
  public func update(
    _ transform: @escaping @Sendable (inout Value) throws -> Void, initialValue: Value,
    continuation: UpdateContinuation<Value>
  ) {
    writes.queue.enqueue {
      let retry = UpdateRetry.standard
      let deadline = ContinuousClock.now + retry.deadline
      var conflicts = 0
      while true {
        do throws(HTTPError) {
          let (latest, version) = try await readLatest()
          var value = latest ?? initialValue
          let transformed = Result { try transform(&value) }
          if case .failure(let error) = transformed { return continuation.resume(throwing: error) }
          let (stored, _, _) = try await store(
            value, derivedFrom: latest == nil ? .absent : version)
          return continuation.resume(returning: stored)
        } catch {
          guard case .conflict = error else { return continuation.resume(throwing: error) }
          // Equal writers that retry at once retry together, and one of them can lose every
          // round: wait a random part of a growing ceiling first (full jitter).
          conflicts += 1
          let wait = retry.delay(afterFailures: conflicts)
          guard ContinuousClock.now + wait < deadline else {
            return continuation.resume(throwing: error)
          }
          try? await Task.sleep(for: wait)
        }
      }
    }
  }

  /// The stored value and its version, or `nil` when the resource does not exist (404).
  private func readLatest() async throws(HTTPError) -> (Value?, SharedVersion?) {
    do throws(HTTPError) {
      guard case .value(let value, let version) = try await reader.fetch(conditional: false)
      else { return (nil, nil) }
      return (value, version)
    } catch .status(404, _, _, _) {
      return (nil, nil)
    }
  }

  /// One write conditional on the version `value` was derived from: `If-None-Match: *` for
  /// `SharedVersion.absent` (and for no version, unless the holders' value came without one,
  /// as a server-sent event's data does: then the current validators). Returns the stored
  /// value, its version, and whether the server stored other bytes than those sent.
  private func store(
    _ value: Value, derivedFrom version: SharedVersion?
  ) async throws(HTTPError) -> (Value, SharedVersion?, computed: Bool) {
    let precondition: WritePrecondition
    if version?.isAbsent == true
      || (version == nil && !reader.validators.lastDeliveredWithoutVersion)
    {
      precondition = .absent
    } else {
      let validators = version?.validators ?? reader.validators.current
      precondition = .matching(etag: validators.etag, lastModified: validators.lastModified)
    }
    reader.validators.beginWrite()
    defer { reader.validators.endWrite() }
    let (response, url, sent) = try await write(reader.client, value, precondition)
    if !response.body.isEmpty, (200..<300).contains(response.status),
      let stored = try? reader.endpoint.decode(response, url: url)
    {
      // A representation of what the server stored: server-computed fields arrive.
      let written = reader.validators.recordOwnWrite(response)
      return (stored, written, response.body != sent)
    }
    // No representation: the stored version may differ from what was sent (and its validator
    // may be missing), so read it back once, unconditionally, as our own write's version. What
    // it reads may already be newer than the write (another writer's change landed in
    // between): then the holders take it, as they take fields the server computes.
    reader.validators.forget()
    let (stored, written, sameBytes) = try await reader.readBack(sent: sent)
    return (stored, written, !sameBytes)
  }
}

/// What a save requires of the stored resource.
enum WritePrecondition: Sendable {
  /// The version named by these validators (`If-Match`, else `If-Unmodified-Since`; neither:
  /// no precondition, which only `lastWriterWins` allows).
  case matching(etag: String?, lastModified: String?)
  /// No version at all (`If-None-Match: *`): the value was derived from nothing seen.
  case absent
}

/// A key's serial write queue (the one ``SerialWriteQueue`` of networked keys) and its current
/// subscriber, which a save tells what the server stored.
final class Writes: Sendable {
  private let current = Lock<(any Sendable)?>(nil)
  /// Saves and updates of the key, one at a time, in call order.
  let queue = SerialWriteQueue()

  func setSubscriber(_ subscriber: (any Sendable)?) {
    current.withLock { $0 = subscriber }
  }

  var subscriber: (any Sendable)? { current.withLock { $0 } }
}

extension Writes {
  fileprivate func subscriber<Value>(of _: Value.Type) -> SharedSubscriber<Value>? {
    subscriber as? SharedSubscriber<Value>
  }
}

extension SharedReaderKey {
  /// A writable value read from `endpoint` and saved with `save` (a `PUT` or `PATCH` whose
  /// body is the value), with `parameters`; polled conditionally every `interval`.
  ///
  /// With `lastWriterWins`, a resource that offers no validator is saved without a
  /// precondition (and may overwrite another writer's change); without it, such a save fails.
  public static func http<Parameters, Value, SaveResponse>(
    _ endpoint: Endpoint<Parameters, NoBody, Value>,
    save: Endpoint<Parameters, Value, SaveResponse>, _ parameters: Parameters,
    client: HTTPClient, every interval: Duration, lastWriterWins: Bool = false
  ) -> Self where Self == HTTPResourceKey<Parameters, Value> {
    HTTPResourceKey(
      reader: HTTPKey(endpoint, parameters, client: client, updates: .polling(every: interval)),
      save: save, lastWriterWins: lastWriterWins)
  }

  /// A writable value read from `endpoint` and saved with `save`, kept fresh by `updates`.
  public static func http<Parameters, Value, SaveResponse>(
    _ endpoint: Endpoint<Parameters, NoBody, Value>,
    save: Endpoint<Parameters, Value, SaveResponse>, _ parameters: Parameters,
    client: HTTPClient, updates: HTTPUpdates, lastWriterWins: Bool = false
  ) -> Self where Self == HTTPResourceKey<Parameters, Value> {
    HTTPResourceKey(
      reader: HTTPKey(endpoint, parameters, client: client, updates: updates), save: save,
      lastWriterWins: lastWriterWins)
  }

  /// A writable value read from a parameterless `endpoint` and saved with `save`, polled
  /// conditionally every `interval`.
  ///
  /// ```swift
  /// @Shared(.http(API.settings, save: API.saveSettings, client: api, every: .seconds(30)))
  /// var settings = Settings()
  /// ```
  public static func http<Value, SaveResponse>(
    _ endpoint: Endpoint<NoParameters, NoBody, Value>,
    save: Endpoint<NoParameters, Value, SaveResponse>, client: HTTPClient,
    every interval: Duration, lastWriterWins: Bool = false
  ) -> Self where Self == HTTPResourceKey<NoParameters, Value> {
    http(
      endpoint, save: save, NoParameters(), client: client, every: interval,
      lastWriterWins: lastWriterWins)
  }

  /// A writable value read from a parameterless `endpoint` and saved with `save`, kept fresh
  /// by `updates`.
  public static func http<Value, SaveResponse>(
    _ endpoint: Endpoint<NoParameters, NoBody, Value>,
    save: Endpoint<NoParameters, Value, SaveResponse>, client: HTTPClient,
    updates: HTTPUpdates, lastWriterWins: Bool = false
  ) -> Self where Self == HTTPResourceKey<NoParameters, Value> {
    http(
      endpoint, save: save, NoParameters(), client: client, updates: updates,
      lastWriterWins: lastWriterWins)
  }
}
