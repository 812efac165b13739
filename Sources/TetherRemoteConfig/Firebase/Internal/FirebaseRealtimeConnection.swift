import Foundation
import Streams
import Tether
import TetherHTTP
import TetherSupport

/// The realtime stream of one ``FirebaseConfigSource``: `streamFetchInvalidations`, kept open
/// and reopened for as long as a ``RemoteConfig`` watches the source.
///
/// Each `latestTemplateVersionNumber` newer than the config's version calls `onChange`, which
/// makes the config fetch (the source then fetches until that version arrives) and activate.
/// Calls are coalesced (``ChangeCoalescer``, at most one per ``changeInterval``): a stream
/// that floods change events costs a bounded number of fetches and no memory per event.
/// `featureDisabled` ends realtime (state ``FirebaseRealtimeState/disabled``), and so does a
/// status that cannot be retried (``FirebaseRealtimeState/stopped(_:)``); when to reconnect
/// otherwise is ``RealtimeReconnection``'s decision. Unlike the official SDKs, it never gives
/// up after a number of retryable failures: it keeps reconnecting (at most
/// ``FirebaseRealtimeSettings/maximumBackoff`` apart) and says so in the state.
final class FirebaseRealtimeConnection: Sendable {
  private let source: FirebaseConfigSource
  private let settings: FirebaseRealtimeSettings
  private let changes: ChangeCoalescer
  private let task = Lock<Task<Void, Never>?>(nil)

  /// The shortest time between two `onChange` calls; announcements in between become one.
  static let changeInterval = Duration.milliseconds(500)
  private let client: HTTPClient

  init(
    source: FirebaseConfigSource, settings: FirebaseRealtimeSettings,
    onChange: @escaping @Sendable () -> Void
  ) {
    self.source = source
    self.settings = settings
    changes = ChangeCoalescer(interval: Self.changeInterval, onChange: onChange)
    client = HTTPClient(
      baseURL: source.endpoints.realtime, headers: [:],
      sensitiveHeaders: ["x-goog-api-key", "x-goog-firebase-installations-auth"],
      timeout: .seconds(30), maximumResponseSize: 64 << 10, retryPolicy: .none)
  }

  func start() {
    let running = Task { await self.run() }
    task.withLock { $0 = running }
  }

  func cancel() {
    task.withLock { $0 }?.cancel()
    changes.cancel()
  }

  private func run() async {
    await source.pendingAttach.withLock { $0 }?.value
    var schedule = RealtimeReconnection(backoff: settings.reconnectionBackoff)
    while !Task.isCancelled {
      source.setRealtimeState(.connecting)
      let outcome: RealtimeReconnection.Outcome
      do {
        outcome = try await connectAndListen(&schedule)
      } catch is CancellationError {
        return
      } catch {
        // Installations failures and network failures before the stream opened.
        outcome = .failed(RemoteConfigError(error))
      }
      if Task.isCancelled { return }
      switch schedule.next(after: outcome, now: Date()) {
      case .stop(let state):
        source.setRealtimeState(state)
        return
      case .reconnect(let wait, let failures, let reason):
        source.setRealtimeState(
          .waitingToReconnect(
            until: Date().addingTimeInterval(wait.timeInterval), failures: failures, reason: reason)
        )
        do {
          try await Task.sleep(for: wait)
        } catch {
          return
        }
      }
    }
  }

  /// Opens the stream and reads it until it ends, telling `schedule` when it opened and what
  /// `retryIntervalSeconds` the server sent.
  private func connectAndListen(
    _ schedule: inout RealtimeReconnection
  ) async throws -> RealtimeReconnection.Outcome {
    var installation = try await source.installations.installation()
    var response = try await open(installation)
    // One new token for a 401 (an expired or revoked token), as the SDKs do; a 403 is the
    // project's answer (the Realtime API disabled, a restricted key): a new token cannot help.
    if response.status == 401 {
      installation = try await source.installations.installation(
        rejecting: installation.authToken)
      response = try await open(installation)
    }
    guard response.status == 200 else {
      let error = FirebaseFetchAnswer.error(status: response.status, retryAfter: nil)
      return RealtimeReconnection.isRetryable(status: response.status)
        ? .failed(error) : .refused(error)
    }
    schedule.connected()
    source.setRealtimeState(.connected)
    var parser = RealtimeMessageParser()
    do {
      for try await chunk in response.body {
        for message in parser.feed(chunk) {
          if message["featureDisabled"] == .bool(true) { return .disabled }
          if case .object(let error)? = message["error"] {
            // A 200 whose body is an error object: the status inside decides, as for a
            // refused connection.
            let status = Self.number(error["code"]).map { Int(exactly: $0) ?? 0 } ?? 0
            let reason = FirebaseFetchAnswer.error(status: status, retryAfter: nil)
            return RealtimeReconnection.isRetryable(status: status)
              ? .ended(reason) : .refused(reason)
          }
          if let seconds = Self.number(message["retryIntervalSeconds"]) {
            schedule.retryInterval(seconds: seconds, at: Date())
          }
          if let version = Self.number(message["latestTemplateVersionNumber"]),
            version.isFinite, version >= 0, version < 1e15,
            source.announce(version: Int(version))
          {
            changes.changed()
          }
        }
      }
    } catch {
      if Task.isCancelled { throw CancellationError() }
      return .ended(.connectionFailed("the realtime stream dropped: \(error)"))
    }
    return .ended(nil)
  }

  private func open(_ installation: FirebaseInstallation) async throws -> HTTPStreamingResponse {
    let (version, etag) = source.realtimeBasis
    // The SDKs name the project by its number in both the path and the body (Android and JS
    // take it from the app ID, iOS from the GCM sender ID, which is the same number).
    let project = Self.projectNumber(appID: source.appID) ?? source.projectID
    let body: JSONValue = .object([
      "project": .string(project),
      "namespace": .string(source.namespace),
      "lastKnownVersionNumber": .string(String(version)),
      "appId": .string(source.appID),
      "sdkVersion": .string(FirebaseConfigSource.sdkVersion),
      "appInstanceId": .string(installation.fid),
    ])
    let url = FirebaseEndpoints.url(
      source.endpoints.realtime,
      "/v1/projects/\(FirebaseEndpoints.escape(project))/namespaces/"
        + "\(FirebaseEndpoints.escape(source.namespace)):streamFetchInvalidations",
      query: [("key", source.apiKey)])
    var request = HTTPRequest(method: .post, url: url, body: body.jsonData())
    request.setHeader("Content-Type", "application/json")
    request.setHeader("Accept", "application/json")
    // As the Android SDK sends them: the answer is streamed, and the front end may retry.
    request.setHeader("X-Accept-Response-Streaming", "true")
    request.setHeader("X-Google-GFE-Can-Retry", "yes")
    request.setHeader("X-Goog-Api-Key", source.apiKey)
    request.setHeader("X-Goog-Firebase-Installations-Auth", installation.authToken)
    request.setHeader("If-None-Match", etag ?? "*")
    do {
      return try await client.streamingResponse(for: request)
    } catch .cancelled {
      throw CancellationError()
    } catch {
      throw RemoteConfigError(http: error, timeout: 30)
    }
  }

  /// The project number in an app ID such as `1:1234567890:web:abc123`.
  static func projectNumber(appID: String) -> String? {
    let parts = appID.split(separator: ":")
    guard parts.count >= 3, parts[1].allSatisfy(\.isNumber) else { return nil }
    return String(parts[1])
  }

  private static func number(_ value: JSONValue?) -> Double? {
    switch value {
    case .int(let number)?: Double(number)
    case .double(let number)?: number.isFinite ? number : nil
    case .string(let text)?: Double(text).flatMap { $0.isFinite ? $0 : nil }
    default: nil
    }
  }
}

/// Cuts the realtime body into its JSON objects: each top-level object of the endless array
/// the server streams (the SDKs take the text from a `{` to the matching `}`). Braces inside
/// strings do not count, and an error object (`{"error": {…}}`) arrives whole.
struct RealtimeMessageParser {
  /// A message larger than this is dropped, so a hostile stream cannot grow memory.
  static let limit = 64 << 10
  private var buffer = Data()
  /// Where the scan of `buffer` stopped, and the nesting and string state there.
  private var scanned = 0
  private var depth = 0
  private var inString = false
  private var escaped = false

  mutating func feed(_ chunk: Data) -> [[String: JSONValue]] {
    buffer.append(chunk)
    var messages: [[String: JSONValue]] = []
    var start: Int? = depth > 0 ? 0 : nil
    var index = scanned
    let bytes = [UInt8](buffer)
    while index < bytes.count {
      let byte = bytes[index]
      if depth == 0 {
        if byte == UInt8(ascii: "{") {
          depth = 1
          start = index
        }
      } else if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
      } else if byte == UInt8(ascii: "\"") {
        inString = true
      } else if byte == UInt8(ascii: "{") {
        depth += 1
      } else if byte == UInt8(ascii: "}") {
        depth -= 1
        if depth == 0, let open = start {
          if case .object(let object)? = try? JSONValue(parsing: Data(bytes[open...index])) {
            messages.append(object)
          }
          start = nil
        }
      }
      index += 1
    }
    // Keep only the unfinished message (separators between messages are dropped).
    if let open = start, depth > 0 {
      if bytes.count - open > Self.limit {
        buffer.removeAll()
        (scanned, depth, inString, escaped) = (0, 0, false, false)
      } else {
        buffer = Data(bytes[open...])
        scanned = bytes.count - open
      }
    } else {
      buffer.removeAll()
      scanned = 0
    }
    return messages
  }
}
